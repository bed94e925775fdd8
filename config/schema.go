package config

import _ "embed"

// Schema is the JSON Schema (draft 2020-12) of orket.yaml.
//
//go:embed schema.json
var Schema []byte
