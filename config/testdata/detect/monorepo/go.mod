module example.com/mono
