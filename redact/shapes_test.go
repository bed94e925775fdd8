package redact

// The secrets table: one realistic line (or block) per shape, as a tool
// prints it. The secrets are made up; provider prefixes are written apart
// ("gh"+"p_") so that no scanner mistakes this file for a leak.

// A shape is a line holding a secret: secret must be gone after
// redaction, and every string of keep must still be there.
type shape struct {
	name   string
	line   string
	secret string
	keep   []string
}

const (
	rsaBody = "MIIEowIBAAKCAQEA575yx8xm5MslfY5ubiheyEd7P4zDL/ak6J0kGODKdinZnLXi\n" +
		"b0prFmbh7+wy5yq1XoY1BaIMcAxYmfsB4HbQLXjjlAFbVV6q9rXxtNDFyuzX9k1g\n" +
		"nneGEYG1+LwiqD9jJBAciI05FhfwKVqlUr5Qrec8TNecj9iNOrjj5VfqRTk8j1d/\n" +
		"bWWbjkloG1QX647kdNl9cDo/+GbVMszvR4/EPZGz\n"
	ecBody = "MHcCAQEEIDzBXCOArr/SfiJvo58JB0W/O5PjeJfJTNcrZ6ydIEsgoAoGCCqGSM49\n" +
		"AwEHoUQDQgAE0Xq56zaWR7PAmpBFXlNPHcSke4R1J+dBi2ewQr8t4/lC4LvGNWAM\n" +
		"+lvi60ZIF8/qR38Ony1d\n"
	opensshBody = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n" +
		"mhr7jmPY72T3AVbfzx06UVZyvmbPkZyRHJouZrQV3xZAxjRM8mbTgDIMRBZxjX/BpYconE\n" +
		"4r16H1UrLqE9oNTJIyJEyFzfhbIH2d\n"
	pgpBody = "lQOYBGZ1sFuWvPAX2LJh8NoMtwh6c9eOnzxTBE8C4xJZwN9H+ZRl9CZgBrXJhEb8\n" +
		"CZFkUUdUYXyVXtwwl6KcChuLc2iNkQkJnOkdsm2FC+R6YSRQr/+jf0SaWl7dUbo1\n" +
		"PsHqIgtwaAtqkTIm97kMcy1yl4Ae0/uNONZjN7iUjrnY\n" +
		"=Xq9L\n"
)

var shapes = []shape{
	// Provider tokens.
	{"aws access key id", "Using AWS credentials: AWS_ACCESS_KEY_ID=AKIA" + "QYLPMN5HHHFPZAM2 region=us-east-1", "AKIAQYLPMN5HHHFPZAM2", []string{"AWS_ACCESS_KEY_ID=", "region=us-east-1"}},
	{"aws secret access key", "aws_secret_access_key = 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", "MtEPO6UkzYuF0ie9Pu2njHkAm1+5wDr16EpLLJIV", []string{"aws_secret_access_key = "}},
	{"github token in remote", "remote: Invalid username or token. fatal: Authentication failed for 'https://x-access-token:gh" + "s_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d@github.com/acme/api.git/'", "u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d", []string{"x-access-token:", "@github.com/acme/api.git/"}},
	{"github classic pat", "GH_TOKEN=gh" + "p_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d gh release create v1.2.0", "u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d", []string{"GH_TOKEN=", "gh release create v1.2.0"}},
	{"github fine-grained pat", "Authenticating with github_" + "pat_KLzdocJ2isAjIhKtJ0RlgL_KOmxgJTeKdNnFRIBXuDL7DxtpYlSXpfKtHF4vUCsMehGAkWvj7FAc9QeWJK", "KLzdocJ2isAjIhKtJ0RlgL_KOmxgJTeKdNnFRIBXuDL7DxtpYlSXpfKtHF4vUCsMehGAkWvj7FAc9QeWJK", []string{"Authenticating with"}},
	{"gitlab pat", "$ curl --header \"PRIVATE-TOKEN: gl" + "pat-Y40uvSwMFLZDe1f8rESQ\" https://gitlab.example.com/api/v4/projects", "Y40uvSwMFLZDe1f8rESQ", []string{"PRIVATE-TOKEN: ", "https://gitlab.example.com/api/v4/projects"}},
	{"slack bot token", "slack: posting with token xo" + "xb-104974650752-9170342366712-CzJr4i0B3JrTAwR4y9ojfljo failed: channel_not_found", "CzJr4i0B3JrTAwR4y9ojfljo", []string{"channel_not_found"}},
	{"slack webhook", "POST https://hooks.slack.com/services/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 returned 404", "nLqNGpuxcmlzkO7rRu5ykYYq", []string{"https://hooks.slack.com/services/", "returned 404"}},
	{"stripe secret key", "stripe.error.AuthenticationError: Invalid API Key provided: sk_" + "live_QoaF1LlqsajAIxNKu8iS2G8N", "QoaF1LlqsajAIxNKu8iS2G8N", []string{"Invalid API Key provided: "}},
	{"google api key", "GET https://maps.googleapis.com/maps/api/geocode/json?address=x&key=AI" + "zaPRVdD53X83RZJzzzzgEOzdmenCkhvMdgaKj 403", "PRVdD53X83RZJzzzzgEOzdmenCkhvMdgaKj", []string{"maps.googleapis.com", "403"}},
	{"openai key", "openai.AuthenticationError: Incorrect API key provided: sk-" + "proj-Ig8xNbe3nNyjOq9wMxEhh2FDEEtfjgVvVqE1SkHbn88HxjSI.", "Ig8xNbe3nNyjOq9wMxEhh2FDEEtfjgVvVqE1SkHbn88HxjSI", []string{"Incorrect API key provided: "}},
	{"anthropic key", "ANTHROPIC_API_KEY is set to sk-" + "ant-api03-6bWHtP3fS2qHx6kwXoIIXGvOoNZYW2mZp0zVZomHFwUbbYrEqmSM9wCZ7Uw9xfogoEmvnEN5N1aE6PwZPf1Qh6yYTWmE4AA", "6bWHtP3fS2qHx6kwXoIIXGvOoNZYW2mZp0zVZomHFwUbbYrEqmSM9wCZ7Uw9xfogoEmvnEN5N1aE6PwZPf1Qh6yYTWmE4AA", []string{"ANTHROPIC_API_KEY is set to"}},
	{"npm token in npmrc", "//registry.npmjs.org/:_authToken=np" + "m_lBYOvfZ8UzDzV8fUkkibjL5DZPjN0MEQ7wjJ", "lBYOvfZ8UzDzV8fUkkibjL5DZPjN0MEQ7wjJ", []string{"//registry.npmjs.org/:_authToken="}},
	{"npmrc authToken not npm_", "npm ERR! //npm.pkg.github.com/:_authToken=9f3c0a8e5b7d41c2a6e0f1b2c3d4e5f6a7b8c9d0", "9f3c0a8e5b7d41c2a6e0f1b2c3d4e5f6a7b8c9d0", []string{"npm ERR! //npm.pkg.github.com/:_authToken="}},
	{"npmrc _auth", "_auth=dXNlcjpzM2NyM3RQYXNzd29yZA==", "dXNlcjpzM2NyM3RQYXNzd29yZA==", []string{"_auth="}},
	{"pypi token", "twine upload --username __token__ --password py" + "pi-AgEIcHlwaS5vcmcqcbnr3yBdGBLEPH1qhT61qtc4xatws8phP9nhFyJfm5di4PzJ59FHz5r1pY4OjE2jBMptU dist/*", "AgEIcHlwaS5vcmcqcbnr3yBdGBLEPH1qhT61qtc4xatws8phP9nhFyJfm5di4PzJ59FHz5r1pY4OjE2jBMptU", []string{"twine upload --username __token__ --password", "dist/*"}},
	{"pypi token alone", "Uploading with token py" + "pi-AgEIcHlwaS5vcmcqcbnr3yBdGBLEPH1qhT61qtc4xatws8phP9nhFyJfm5di4PzJ59FHz5r1pY4OjE2jBMptU", "qcbnr3yBdGBLEPH1qhT61qtc4xatws8phP9nhFyJfm5di4PzJ59FHz5r1pY4OjE2jBMptU", []string{"Uploading with token"}},
	{"hugging face token", "huggingface_hub.errors.HfHubHTTPError: 401 Client Error (token hf" + "_zymMlopiWfqUyHRSIfNFmAUNLnYYxyRnjD)", "zymMlopiWfqUyHRSIfNFmAUNLnYYxyRnjD", []string{"401 Client Error"}},
	{"jwt", `{"level":"debug","msg":"got id token","jwt":"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"}`, "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", []string{`"msg":"got id token"`}},
	{"twilio api key", "twilio: authenticating as SK" + "e0ca923732881584d8c4fa2815d28028", "e0ca923732881584d8c4fa2815d28028", []string{"twilio: authenticating as"}},
	{"twilio auth token", "TWILIO_AUTH_TOKEN=e0ca923732881584d8c4fa2815d28028 node send.js", "e0ca923732881584d8c4fa2815d28028", []string{"TWILIO_AUTH_TOKEN=", "node send.js"}},
	{"sendgrid key", "python_http_client.exceptions.UnauthorizedError: HTTP Error 401 using SG" + ".kCiHp6bR1IqfEouHgxzNNA.L5wIScGebcy8F5n3-YNBDRzrZSgqbjG3uhkWKFLf6xu", "L5wIScGebcy8F5n3-YNBDRzrZSgqbjG3uhkWKFLf6xu", []string{"HTTP Error 401 using"}},
	{"mailgun key", "mailgun: 401 Forbidden for api:ke" + "y-8e08baa7196b50ac2f86702824c1c099", "8e08baa7196b50ac2f86702824c1c099", []string{"mailgun: 401 Forbidden for api:"}},
	{"square access token", "square: using access token EA" + "AADktXP-tKsf2rcDkdfrUnW5gcF_Ha6ili8GjHEAD6-Wj9KfzjsQGMrb9h_ImB", "DktXP-tKsf2rcDkdfrUnW5gcF_Ha6ili8GjHEAD6-Wj9KfzjsQGMrb9h_ImB", []string{"square: using access token"}},
	{"square oauth secret", "SQUARE_APP=sq0" + "atp-_LK777pzNk8cL6j5IXAAjl make deploy", "_LK777pzNk8cL6j5IXAAjl", []string{"make deploy"}},
	{"shopify token", "ShopifyAPI::Unauthorized: [API] Invalid API key or access token (shp" + "at_48b483b7ffc050fec94dbca3a0aac360)", "48b483b7ffc050fec94dbca3a0aac360", []string{"ShopifyAPI::Unauthorized"}},
	{"digitalocean token", "doctl auth init --context ci --access-token do" + "p_v1_98b2cc2bd818319478da6bd0c621de49f145fda9988c79fc35526f7eaed46725", "98b2cc2bd818319478da6bd0c621de49f145fda9988c79fc35526f7eaed46725", []string{"doctl auth init --context ci --access-token"}},
	{"heroku api key", "heroku: Using HEROKU_API_KEY a2a7b860-dcd6-c8a1-f8b4-6287cced9041 for app acme-staging", "a2a7b860-dcd6-c8a1-f8b4-6287cced9041", []string{"HEROKU_API_KEY", "for app acme-staging"}},
	{"heroku new token", "HEROKU_API_KEY: HR" + "KU-AAwRkl8OZfIa2AUk7z7gTqBu4wweocv81k2lsNaWQrZzhB4GZqT8hqt0pmps", "AAwRkl8OZfIa2AUk7z7gTqBu4wweocv81k2lsNaWQrZzhB4GZqT8hqt0pmps", []string{"HEROKU_API_KEY: "}},
	{"databricks token", "databricks configure --host https://adb-1234.azuredatabricks.net --token da" + "pidff02cee737443e210471948d33296c8", "dff02cee737443e210471948d33296c8", []string{"https://adb-1234.azuredatabricks.net"}},
	{"azure ad client secret", "az login --service-principal -u 0d5e8c3a-1111-2222-3333-444455556666 --tenant acme.onmicrosoft.com -p oYM8" + "Q~abM6JOF8EFd0Nhcy~1kGD2VD~eR1UYzaL.", "abM6JOF8EFd0Nhcy~1kGD2VD~eR1UYzaL", []string{"az login --service-principal", "--tenant acme.onmicrosoft.com"}},
	{"azure ad client secret in env", "AZURE_CLIENT_ID=0d5e8c3a AZURE_CLIENT_SECRET_VALUE=oYM8" + "Q~abM6JOF8EFd0Nhcy~1kGD2VD~eR1UYzaL. terraform plan", "abM6JOF8EFd0Nhcy~1kGD2VD~eR1UYzaL", []string{"terraform plan"}},
	{"azure storage account key", "DefaultEndpointsProtocol=https;AccountName=acmestore;AccountKey=iA/zNyD7CHLn/xC+1hsYgBds1ghxY5OokvQyx7eNWVQ4vnakJkS1pAWTN3lg8zV5yPU8d0FZfWe7ihGyiRUIQf==;EndpointSuffix=core.windows.net", "iA/zNyD7CHLn/xC+1hsYgBds1ghxY5OokvQyx7eNWVQ4vnakJkS1pAWTN3lg8zV5yPU8d0FZfWe7ihGyiRUIQf==", []string{"AccountName=acmestore;AccountKey=", ";EndpointSuffix=core.windows.net"}},
	{"azure shared access signature", "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessSignature=sv=2021-08-06&ss=b&srt=sco&sp=rwdlac&se=2026-01-01T00:00:00Z&sig=qVTSu7rtaUWM6ZO88eb0ogET9D9XyYq6B0Fi7FlaZ7V%3D", "qVTSu7rtaUWM6ZO88eb0ogET9D9XyYq6B0Fi7FlaZ7V", []string{"Endpoint=sb://acme.servicebus.windows.net/;SharedAccessSignature="}},
	{"azure sas url", "AuthorizationPermissionMismatch: https://acmestore.blob.core.windows.net/backups/db.tar?sv=2021-08-06&se=2026-01-01&sr=b&sp=r&sig=qVTSu7rtaUWM6ZO88eb0ogET9D9XyYq6B0Fi7FlaZ7V%3D", "qVTSu7rtaUWM6ZO88eb0ogET9D9XyYq6B0Fi7FlaZ7V", []string{"https://acmestore.blob.core.windows.net/backups/db.tar?sv=2021-08-06", "&sig="}},
	{"azure service bus key", "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SBeVRsfAGeAbP0VxNjAe/9i0mYtluYI0KN1gNT11cUz=", "SBeVRsfAGeAbP0VxNjAe/9i0mYtluYI0KN1gNT11cUz=", []string{"SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey="}},
	{"gcp service account private key", `  "private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----\n",`, "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7", []string{`"private_key": `}},
	{"vault token", "Error making API request. URL: GET http://127.0.0.1:8200/v1/secret/data/app X-Vault-Token: hv" + "s.zUzn8aB5kBh0fzK4xDXkiadJ Code: 403", "zUzn8aB5kBh0fzK4xDXkiadJ", []string{"Code: 403"}},
	{"sentry auth token", "sentry-cli: using auth token sntry" + "s_eyJpYXQiOjE3MTY5MDAwMDAuMSwidXJsIjoiaHR0cHM6Ly9zZW50cnkuaW8iLCJyZWdpb25fdXJsIjoiaHR0cHM6Ly91cy5zZW50cnkuaW8iLCJvcmciOiJhY21lIn0_W4yWRzSaTLyvH1D0SZaozaNv4AH17KzcnNjeh1MVLym", "W4yWRzSaTLyvH1D0SZaozaNv4AH17KzcnNjeh1MVLym", []string{"sentry-cli: using"}},
	{"docker hub pat", "echo dckr_" + "pat_ccOif7UuXUGfdWG5yP8Yib2eNUS | docker login -u acme --password-stdin", "ccOif7UuXUGfdWG5yP8Yib2eNUS", []string{"docker login -u acme --password-stdin"}},
	{"telegram bot token", "telegram.error.InvalidToken: https://api.telegram.org/bot9832638986:AA" + "wNiMg9aW37k5wCnHDepQHgI3HLBkbvHEz/getMe", "wNiMg9aW37k5wCnHDepQHgI3HLBkbvHEz", []string{"https://api.telegram.org/bot"}},
	{"discord webhook", "POST https://discord.com/api/webhooks/180578891486546592/UQk4DwgLGNOaeCtL31Ugq_DfcgaTMnTC0MrAU8urbFt5misIZHbhS4-FvafhdZxEuhnb: 401", "UQk4DwgLGNOaeCtL31Ugq_DfcgaTMnTC0MrAU8urbFt5misIZHbhS4-FvafhdZxEuhnb", []string{"https://discord.com/api/webhooks/180578891486546592/"}},
	{"age secret key", "# created: 2026-05-28\nAGE-SECRET-" + "KEY-1JTT6FD5LWS8HTYJQR4DCE4EC6H9TZHEUWNWNX5D0CJU9U6SYJ57GSMJ62J", "JTT6FD5LWS8HTYJQR4DCE4EC6H9TZHEUWNWNX5D0CJU9U6SYJ57GSMJ62J", []string{"# created: 2026-05-28"}},

	// Headers, URLs, pairs.
	{"authorization bearer header", "> Authorization: Bearer fifiUziXnFAAoeelK9mqmALOR2HcSGKgVP-8Kd0d", "fifiUziXnFAAoeelK9mqmALOR2HcSGKgVP-8Kd0d", []string{"> Authorization: Bearer "}},
	{"authorization basic header", "-H 'Authorization: Basic YWRtaW46czNjcjN0UGFzcw==' https://api.example.com/v1", "YWRtaW46czNjcjN0UGFzcw==", []string{"-H 'Authorization: Basic ", "https://api.example.com/v1"}},
	{"generic bearer token", "retrying request with Bearer fifiUziXnFAAoeelK9mqmALOR2HcSGKgVP-8Kd0d (attempt 2)", "fifiUziXnFAAoeelK9mqmALOR2HcSGKgVP-8Kd0d", []string{"retrying request with Bearer", "(attempt 2)"}},
	{"cookie header", "< Set-Cookie: sessionid=4f1c9a7be2d84a0c9e3b; Path=/; HttpOnly", "4f1c9a7be2d84a0c9e3b", []string{"< Set-Cookie: "}},
	{"basic auth in url", "fatal: unable to access 'https://deploy:hunter2-Secret@git.example.com/acme/api.git/': The requested URL returned error: 403", "hunter2-Secret", []string{"https://deploy:", "@git.example.com/acme/api.git/"}},
	{"postgres url", "psql: error: connection to server failed: postgresql://app:Sup3r$ecret@db.internal:5432/app", "Sup3r$ecret", []string{"postgresql://app:", "@db.internal:5432/app"}},
	{"api key in yaml", "  API_KEY: 0123456789abcdef", "0123456789abcdef", []string{"  API_KEY: "}},
	{"password pair", "db.connect(host=db.internal, user=app, password=correct-horse-battery)", "correct-horse-battery", []string{"host=db.internal", "password="}},
	{"yaml secret", "  client_secret: s3cr3t-value-here", "s3cr3t-value-here", []string{"client_secret: "}},
	{"json secret", `{"client_id": "acme-ci", "client_secret": "s3cr3t-value-here"}`, "s3cr3t-value-here", []string{`"client_id": "acme-ci"`, `"client_secret": `}},
	{"json secret with escaped quote", `{"password": "ab\"cd-ef9"}`, `cd-ef9`, []string{`"password": `}},
	{"docker auths", `{"auths": {"https://index.docker.io/v1/": {"auth": "YWNtZTpkY2tyX3BhdF9zZWNyZXQ="}}}`, "YWNtZTpkY2tyX3BhdF9zZWNyZXQ=", []string{`"https://index.docker.io/v1/"`, `"auth": `}},
	{"docker config base64", "  .dockerconfigjson: eyJhdXRocyI6eyJodHRwczovL2luZGV4LmRvY2tlci5pby92MS8iOnsiYXV0aCI6IllXTnRaVHB6WldOeVpYUT0ifX19", "eyJhdXRocyI6eyJodHRwczovL2luZGV4LmRvY2tlci5pby92MS8iOnsiYXV0aCI6IllXTnRaVHB6WldOeVpYUT0ifX19", []string{".dockerconfigjson: "}},
	{"pgpassword", "PGPASSWORD=Sup3rSecret psql -h db.internal -U app -c 'select 1'", "Sup3rSecret", []string{"PGPASSWORD=", "psql -h db.internal -U app"}},
	{"connection string password", "Server=tcp:acme.database.windows.net,1433;User ID=app;Password=Sup3r!Secret;Encrypt=true", "Sup3r!Secret", []string{"User ID=app;Password=", ";Encrypt=true"}},
	{"netrc", "machine api.heroku.com login ci@example.com password 4f1c9a7be2d84a0c9e3b", "4f1c9a7be2d84a0c9e3b", []string{"machine api.heroku.com login ci@example.com password"}},
	{"presigned s3 url", "GET https://acme.s3.amazonaws.com/a.tgz?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIA&X-Amz-Signature=886e7577496a2c8773e130f7eb19731662b5e803 403", "886e7577496a2c8773e130f7eb19731662b5e803", []string{"X-Amz-Algorithm=AWS4-HMAC-SHA256", "403"}},

	// Flags and commands.
	{"mysql -p", "+ mysql -h db.internal -u root -pS3cretRoot acme < schema.sql", "S3cretRoot", []string{"mysql -h db.internal -u root -p", "acme < schema.sql"}},
	{"mysqldump --password=", "mysqldump --user=root --password=S3cretRoot --all-databases", "S3cretRoot", []string{"--password=", "--all-databases"}},
	{"mariadb -p quoted", "mariadb -uroot -p'S3cret Root' -e 'show databases'", "S3cret Root", []string{"mariadb -uroot -p", "-e 'show databases'"}},
	{"password flag with space", "Running: ./bin/migrate --password hunter2xyz --host db", "hunter2xyz", []string{"./bin/migrate --password", "--host db"}},
	{"token flag", "exec: gh-deploy --token 4f1c9a7be2d84a0c9e3b --env prod", "4f1c9a7be2d84a0c9e3b", []string{"gh-deploy --token", "--env prod"}},
	{"api-token flag", "+ npx vercel deploy --prod --api-token=Zx9Kq2Lm8Np4Rs6T", "Zx9Kq2Lm8Np4Rs6T", []string{"npx vercel deploy --prod --api-token="}},
	{"api-key flag", "semgrep ci --api-key Zx9Kq2Lm8Np4Rs6T --config auto", "Zx9Kq2Lm8Np4Rs6T", []string{"semgrep ci --api-key", "--config auto"}},
	{"secret flag", "vault write auth/approle/login role_id=abc --secret 9f86d081884c7d65", "9f86d081884c7d65", []string{"vault write auth/approle/login role_id=abc --secret"}},
	{"sshpass", "sshpass -p 'Tr0ub4dor&3' ssh deploy@web1 uptime", "Tr0ub4dor&3", []string{"sshpass -p", "ssh deploy@web1 uptime"}},
	{"docker login -p", "docker login -u acme -p Zx9Kq2Lm8Np4Rs6T registry.example.com", "Zx9Kq2Lm8Np4Rs6T", []string{"docker login -u acme -p", "registry.example.com"}},
	{"redis-cli -a", "redis-cli -h cache -a Zx9Kq2Lm8Np4Rs6T ping", "Zx9Kq2Lm8Np4Rs6T", []string{"redis-cli -h cache -a", "ping"}},
	{"curl -u", "curl -fsS -u admin:Zx9Kq2Lm8Np4Rs6T https://nexus.example.com/service/rest/v1/status", "Zx9Kq2Lm8Np4Rs6T", []string{"curl -fsS -u admin:", "https://nexus.example.com"}},
	{"keytool storepass", "keytool -importkeystore -srckeystore a.p12 -srcstorepass Zx9Kq2Lm8Np4 -destkeystore b.jks", "Zx9Kq2Lm8Np4", []string{"-srcstorepass", "-destkeystore b.jks"}},
	{"openssl pass:", "openssl pkcs12 -export -in c.pem -passout pass:Zx9Kq2Lm8Np4 -out c.p12", "Zx9Kq2Lm8Np4", []string{"-passout pass:", "-out c.p12"}},

	// A secret-ish word and a long run.
	{"auth token hex", "2026/05/28 10:00:01 using auth token 886e7577496a2c8773e130f7eb19731662b5e803", "886e7577496a2c8773e130f7eb19731662b5e803", []string{"2026/05/28 10:00:01 using auth token"}},
	{"secret is base64", "INFO generated webhook secret is SBeVRsfAGeAbP0VxNjAe/9i0mYtluYI0KN1gNT11cUz= (store it)", "SBeVRsfAGeAbP0VxNjAe/9i0mYtluYI0KN1gNT11cUz=", []string{"INFO generated webhook secret is", "(store it)"}},

	// Private key blocks.
	{"rsa private key", "$ cat deploy_key\n-----BEGIN RSA PRIVATE KEY-----\n" + rsaBody + "-----END RSA PRIVATE KEY-----\n$ next", "bWWbjkloG1QX647kdNl9cDo/+GbVMszvR4/EPZGz", []string{"$ cat deploy_key\n", "\n$ next"}},
	{"ec private key", "-----BEGIN EC PRIVATE KEY-----\n" + ecBody + "-----END EC PRIVATE KEY-----", "AwEHoUQDQgAE0Xq56zaWR7PAmpBFXlNPHcSke4R1J+dBi2ewQr8t4/lC4LvGNWAM", nil},
	{"openssh private key", "Load key \"/tmp/k\": invalid format\n-----BEGIN OPENSSH PRIVATE KEY-----\n" + opensshBody + "-----END OPENSSH PRIVATE KEY-----\n", "mhr7jmPY72T3AVbfzx06UVZyvmbPkZyRHJouZrQV3xZAxjRM8mbTgDIMRBZxjX/BpYconE", []string{"invalid format\n"}},
	{"pgp private key block", "gpg: exporting\n-----BEGIN PGP PRIVATE KEY BLOCK-----\nComment: ci key\n\n" + pgpBody + "-----END PGP PRIVATE KEY BLOCK-----\ngpg: done", "PsHqIgtwaAtqkTIm97kMcy1yl4Ae0/uNONZjN7iUjrnY", []string{"gpg: exporting\n", "\ngpg: done"}},
	{"encrypted pkcs8 key", "-----BEGIN ENCRYPTED PRIVATE KEY-----\n" + rsaBody + "-----END ENCRYPTED PRIVATE KEY-----", "b0prFmbh7+wy5yq1XoY1BaIMcAxYmfsB4HbQLXjjlAFbVV6q9rXxtNDFyuzX9k1g", nil},
	{"legacy encrypted rsa key", "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,3F2A0E6B0C8D4E1F\n\n" + rsaBody + "-----END RSA PRIVATE KEY-----", "nneGEYG1+LwiqD9jJBAciI05FhfwKVqlUr5Qrec8TNecj9iNOrjj5VfqRTk8j1d/", nil},
	{"indented key in yaml", "    ssh_key: |\n      -----BEGIN OPENSSH PRIVATE KEY-----\n      b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n      mhr7jmPY72T3AVbfzx06UVZyvmbPkZyRHJouZrQV3xZAxjRM8mbTgDIMRBZxjX/BpYconE\n      -----END OPENSSH PRIVATE KEY-----\n    other: 1", "mhr7jmPY72T3AVbfzx06UVZyvmbPkZyRHJouZrQV3xZAxjRM8mbTgDIMRBZxjX/BpYconE", []string{"    ssh_key: |\n", "\n    other: 1"}},
	{"key cut short", "-----BEGIN RSA PRIVATE KEY-----\n" + rsaBody + "--- FAIL: TestDeploy (0.01s)", "nneGEYG1+LwiqD9jJBAciI05FhfwKVqlUr5Qrec8TNecj9iNOrjj5VfqRTk8j1d/", []string{"--- FAIL: TestDeploy (0.01s)"}},
}

// mustStay are lines that hold no secret, only words and names that look
// like one; they must come out unchanged (a classifier reads the name of
// the missing variable from several of them).
var mustStay = []string{
	"DOCS_DEPLOY_TOKEN: DOCS_DEPLOY_TOKEN must be set",
	"error: API_KEY is not set",
	"KeyError: 'STRIPE_SECRET_KEY'",
	"export GITHUB_TOKEN=",
	"GITHUB_TOKEN= ./release.sh",
	"Error: Input required and not supplied: token",
	"token: GITHUB_TOKEN",
	"password: ${{ secrets.DB_PASSWORD }}",
	"--password $MYSQL_ROOT_PASSWORD",
	"  --token string   GitHub token (default from GH_TOKEN)",
	"env: NPM_TOKEN=<your token>",
	"api_key: ***",
	"token expired",
	"password incorrect for user bob",
	`FATAL:  password authentication failed for user "app"`,
	"The SECRET_KEY setting must not be empty.",
	"Enter passphrase for key '/root/.ssh/id_rsa':",
	"--- FAIL: TestRefreshToken (0.00s)",
	"./auth/token.go:42:2: undefined: tokenSource",
	"internal/secret/secret.go:10: want nil error, got permission denied",
	"ok  \tgithub.com/acme/api/token\t0.012s",
	"PASS: TestPasswordHash (0.01s)",
	"prompt_tokens: 1234, completion_tokens: 56",
	"docker login -u acme --password-stdin registry.example.com",
	"mysql -u root -p acme",
	"Digest: sha256:9f86d081884c7d659a2feaf0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
	"ED25519 key fingerprint is SHA256:Zx9Kq2Lm8Np4Rs6TuV0wXyZ1a2B3c4D5e6F7g8H9i0J.",
	"git push -u origin main",
	"dial tcp 127.0.0.1:5432: connect: connection refused",
	"Authorization header missing",
	"token: null",
	`{"token":null,"expires_in":3600}`,
	"Bearer authentication is required",
	"see https://docs.example.com/auth#token for details",
	"--- FAIL: TestAdd (0.00s)",
	"abc",
}
