package feedback

import (
	"path"
	"strings"
	"sync"
)

// A tech is a tool or language orket knows by name.
type tech struct {
	name    string   // as shown: "Kafka", "npm"
	aliases []string // as written in a reason (normalised by Words)
	// bare is a name that is also a common word (go, rust, node, make):
	// it counts only when written capitalised in mid-sentence ("the Go
	// examples"); its other aliases ("golang", "go test") always count.
	bare string
}

// techs are the tools and languages named in reasons. Keep aliases
// specific: a reason's plain English must not read as a tool.
var techs = []tech{
	{name: "Go", aliases: []string{"golang", "go test", "go build", "go vet", "go run", "go mod", "go get", "go install", "go generate", "go fmt", "gofmt", "go work", "go toolchain"}, bare: "go"},
	{name: "Python", aliases: []string{"python", "python3", "python2", "pip", "pip3", "venv", "virtualenv"}},
	{name: "pytest", aliases: []string{"pytest"}},
	{name: "Poetry", aliases: []string{"poetry"}},
	{name: "uv", aliases: []string{"uv run", "uv sync", "uv pip"}},
	{name: "Django", aliases: []string{"django"}},
	{name: "Flask", aliases: []string{"flask"}},
	{name: "FastAPI", aliases: []string{"fastapi"}},
	{name: "Node.js", aliases: []string{"nodejs", "node js"}, bare: "node"},
	{name: "npm", aliases: []string{"npm", "npx"}},
	{name: "Yarn", aliases: []string{"yarn"}},
	{name: "pnpm", aliases: []string{"pnpm"}},
	{name: "Deno", aliases: []string{"deno"}},
	{name: "Bun", aliases: []string{"bun run", "bun test", "bun install"}},
	{name: "TypeScript", aliases: []string{"typescript", "tsc"}},
	{name: "JavaScript", aliases: []string{"javascript"}},
	{name: "React", aliases: []string{"reactjs", "react js", "react native"}, bare: "react"},
	{name: "Vue", aliases: []string{"vue", "vuejs"}},
	{name: "Angular", aliases: []string{"angular"}},
	{name: "Jest", aliases: []string{"jest"}},
	{name: "webpack", aliases: []string{"webpack"}},
	{name: "Vite", aliases: []string{"vite"}},
	{name: "Rust", aliases: []string{"rustc", "rustup", "clippy"}, bare: "rust"},
	{name: "Cargo", aliases: []string{"cargo"}},
	{name: "Java", aliases: []string{"java", "jvm", "jdk"}},
	{name: "Maven", aliases: []string{"maven", "mvn"}},
	{name: "Gradle", aliases: []string{"gradle"}},
	{name: "Kotlin", aliases: []string{"kotlin"}},
	{name: "Scala", aliases: []string{"scala", "sbt"}},
	{name: "Spring", aliases: []string{"spring boot"}},
	{name: "Ruby", aliases: []string{"ruby", "rubygems", "bundler"}},
	{name: "Rails", aliases: []string{"rails"}},
	{name: "PHP", aliases: []string{"php", "composer"}},
	{name: ".NET", aliases: []string{"dotnet", "net core", "csharp", "c sharp"}},
	{name: "Swift", aliases: []string{"swiftc", "swiftpm"}, bare: "swift"},
	{name: "C++", aliases: []string{"cpp", "cplusplus"}},
	{name: "CMake", aliases: []string{"cmake"}},
	{name: "Make", aliases: []string{"makefile", "gnu make"}, bare: "make"},
	{name: "Bash", aliases: []string{"bash", "shell script", "shell scripts", "zsh"}},
	{name: "Git", aliases: []string{"git"}},
	{name: "GitHub Actions", aliases: []string{"github actions", "github action", "github workflow", "github workflows"}},
	{name: "GitLab CI", aliases: []string{"gitlab ci"}},
	{name: "Docker", aliases: []string{"docker", "dockerfile", "container image", "container images"}},
	{name: "Docker Compose", aliases: []string{"docker compose", "compose file"}},
	{name: "Kubernetes", aliases: []string{"kubernetes", "k8s", "kubectl"}},
	{name: "Helm", aliases: []string{"helm"}},
	{name: "Terraform", aliases: []string{"terraform", "tf plan", "tfvars"}},
	{name: "Ansible", aliases: []string{"ansible"}},
	{name: "AWS", aliases: []string{"aws", "amazon web services"}},
	{name: "GCP", aliases: []string{"gcp", "google cloud", "gcloud"}},
	{name: "Azure", aliases: []string{"azure"}},
	{name: "Kafka", aliases: []string{"kafka"}},
	{name: "RabbitMQ", aliases: []string{"rabbitmq", "rabbit mq"}},
	{name: "NATS", aliases: []string{"nats"}},
	{name: "Redis", aliases: []string{"redis"}},
	{name: "PostgreSQL", aliases: []string{"postgres", "postgresql", "psql"}},
	{name: "MySQL", aliases: []string{"mysql", "mariadb"}},
	{name: "SQLite", aliases: []string{"sqlite", "sqlite3"}},
	{name: "MongoDB", aliases: []string{"mongodb", "mongo"}},
	{name: "Elasticsearch", aliases: []string{"elasticsearch", "opensearch"}},
	{name: "SQL", aliases: []string{"sql"}},
	{name: "GraphQL", aliases: []string{"graphql"}},
	{name: "gRPC", aliases: []string{"grpc"}},
	{name: "Protobuf", aliases: []string{"protobuf", "protobufs", "protoc"}},
	{name: "Nginx", aliases: []string{"nginx"}},
	{name: "Linux", aliases: []string{"linux"}},
	{name: "curl", aliases: []string{"curl"}},
}

// programs maps a command's program to the tech it is part of.
var programs = map[string]string{
	"go": "Go", "gofmt": "Go", "golangci-lint": "Go", "staticcheck": "Go",
	"python": "Python", "python3": "Python", "pip": "Python", "pytest": "pytest", "poetry": "Poetry", "uv": "uv", "tox": "Python", "ruff": "Python", "mypy": "Python",
	"node": "Node.js", "npm": "npm", "npx": "npm", "yarn": "Yarn", "pnpm": "pnpm", "deno": "Deno", "bun": "Bun", "tsc": "TypeScript", "jest": "Jest", "vitest": "Vite",
	"cargo": "Cargo", "rustc": "Rust",
	"mvn": "Maven", "gradle": "Gradle", "./gradlew": "Gradle", "gradlew": "Gradle", "java": "Java",
	"bundle": "Ruby", "rake": "Ruby", "ruby": "Ruby", "rails": "Rails",
	"php": "PHP", "composer": "PHP", "dotnet": ".NET", "swift": "Swift",
	"make": "Make", "cmake": "CMake", "bash": "Bash",
	"docker": "Docker", "docker-compose": "Docker Compose", "kubectl": "Kubernetes", "helm": "Helm",
	"terraform": "Terraform", "ansible-playbook": "Ansible", "psql": "PostgreSQL", "mysql": "MySQL", "redis-cli": "Redis",
}

// Toolchain returns the tools a verify profile's commands run, as shown
// in a learned action's environment ("Go", "npm"), in order, once each.
// A command is a shell line ("CGO_ENABLED=0 go test ./...") or an argv
// joined by spaces; its program is its first word that is not a
// variable assignment, env, sudo or time.
func Toolchain(commands []string) []string {
	var out []string
	for _, c := range commands {
		p := program(c)
		name := programs[p]
		if name == "" {
			name = programs[path.Base(p)]
		}
		if name != "" && !contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// program returns the program a command line runs.
func program(command string) string {
	for _, f := range strings.Fields(command) {
		switch {
		case strings.Contains(f, "=") && !strings.HasPrefix(f, "-"):
		case f == "env" || f == "sudo" || f == "time" || f == "exec" || f == "nice":
		case strings.HasPrefix(f, "-"):
		default:
			return strings.Trim(f, `"'`)
		}
	}
	return ""
}

// A techIndex finds technologies in a reason: the known ones, and the
// names the run brings (its commands' programs, its touched files).
type techIndex struct {
	first map[string][]techAlias
}

type techAlias struct {
	words []string
	name  string
	bare  bool // counts only capitalised in mid-sentence
	file  bool // a file of the touch set, not a tool
}

// knownTechs is the index of techs, built on first use.
var knownTechs = sync.OnceValue(func() *techIndex {
	ix := &techIndex{first: map[string][]techAlias{}}
	for _, t := range techs {
		for _, a := range t.aliases {
			ix.add(a, t.name, false, false)
		}
		if t.bare != "" {
			ix.add(t.bare, t.name, true, false)
		}
	}
	return ix
})

func (ix *techIndex) add(alias, name string, bare, file bool) {
	w := Words(alias)
	if len(w) == 0 {
		return
	}
	ix.first[w[0]] = append(ix.first[w[0]], techAlias{words: w, name: name, bare: bare, file: file})
}

// stems that are too common in file names to mean anything in a reason.
var commonStems = map[string]bool{
	"main": true, "index": true, "test": true, "tests": true, "util": true, "utils": true,
	"readme": true, "config": true, "types": true, "common": true, "docs": true, "init": true,
	"setup": true, "example": true, "examples": true, "helper": true, "helpers": true,
	"server": true, "client": true, "handler": true, "handlers": true, "model": true,
	"models": true, "service": true, "data": true, "file": true, "files": true, "code": true,
	"changelog": true, "license": true, "makefile": true, "build": true, "script": true,
	"scripts": true, "source": true, "package": true, "module": true, "section": true,
	"error": true, "errors": true, "missing": true, "wrong": true, "broken": true, "app": true,
}

// runIndex adds to the known technologies the names a run brings: the
// programs of its verify commands and the names of the files it touched
// (whole, "kafka-basics.md", and by stem, "kafka-basics", when the stem
// is not a common one such as main or index).
func runIndex(rc RunContext) *techIndex {
	if len(rc.Commands) == 0 && len(rc.Paths) == 0 {
		return knownTechs()
	}
	known := knownTechs()
	ix := &techIndex{first: make(map[string][]techAlias, len(known.first))}
	for k, v := range known.first {
		ix.first[k] = v
	}
	for _, c := range rc.Commands {
		p := path.Base(program(c))
		if p == "" || p == "." || p == "/" || programs[p] != "" {
			continue // a known tool is already known by its name
		}
		if w := Words(p); len(w) == 1 && len(w[0]) < 3 {
			continue // sh, go-like two-letter names are words
		}
		ix.add(p, p, false, false)
	}
	for _, f := range rc.Paths {
		base := path.Base(f)
		if base == "" || base == "." || base == "/" {
			continue
		}
		if strings.Contains(base, ".") {
			ix.add(base, base, false, true)
		}
		stem := strings.TrimSuffix(base, path.Ext(base))
		if w := Words(stem); len(stem) >= 4 && len(w) > 0 && !commonStems[strings.Join(w, "")] && !isKeyword(w) {
			ix.add(stem, base, false, true)
		}
	}
	return ix
}

// isKeyword reports whether words are a category keyword: such a stem
// ("broken.go") would read every reason as naming the file.
func isKeyword(w []string) bool {
	m := Default().match(w)
	return m.Category != Other
}

// find returns the technologies a reason names, in order of appearance,
// each once, at most three: the tools, and the files of the touch set.
// Where aliases overlap, the longest wins ("docker compose" over
// "docker").
func (ix *techIndex) find(toks []token) (tools, files []string) {
	for i := 0; i < len(toks) && len(tools)+len(files) < 3; i++ {
		var best *techAlias
		for k, a := range ix.first[toks[i].w] {
			if len(a.words) > len(toks)-i || (best != nil && len(a.words) <= len(best.words)) {
				continue
			}
			ok := true
			for j, w := range a.words {
				if toks[i+j].w != w {
					ok = false
					break
				}
			}
			if ok && a.bare && (!toks[i].upper || toks[i].start) {
				ok = false
			}
			if ok {
				best = &ix.first[toks[i].w][k]
			}
		}
		if best == nil {
			continue
		}
		switch {
		case best.file && !contains(files, best.name):
			files = append(files, best.name)
		case !best.file && !contains(tools, best.name):
			tools = append(tools, best.name)
		}
		i += len(best.words) - 1
	}
	return tools, files
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
