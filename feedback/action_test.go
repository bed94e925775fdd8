package feedback

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLearn(t *testing.T) {
	goQuick := RunContext{Profile: "quick", Toolchain: []string{"Go"}}
	docker := RunContext{Toolchain: []string{"Docker"}}
	for _, tc := range []struct {
		name   string
		reason string
		rc     RunContext
		want   Learned
	}{
		{"examples, no environment", "Examples are wrong", RunContext{},
			Learned{Reason: "Examples are wrong", Category: Examples, Keyword: "example", Action: "Validate all code examples"}},
		{"examples in the run's environment", "Examples are wrong", goQuick,
			Learned{Reason: "Examples are wrong", Category: Examples, Keyword: "example", Action: "Validate all code examples in Go with the quick verify profile"}},
		{"profile only", "The output is incorrect", RunContext{Profile: "ci"},
			Learned{Reason: "The output is incorrect", Category: Examples, Keyword: "incorrect", Action: "Validate all code examples in the ci verify profile"}},
		{"a technology woven in (seed 000)", "Kafka examples return errors", docker,
			Learned{Reason: "Kafka examples return errors", Category: Examples, Keyword: "example", Technologies: []string{"Kafka"},
				Action: "Test Kafka commands in Docker before showing them"}},
		{"two technologies", "the kubectl and helm examples are broken", RunContext{},
			Learned{Reason: "the kubectl and helm examples are broken", Category: Examples, Keyword: "example", Technologies: []string{"Kubernetes", "Helm"},
				Action: "Test Kubernetes and Helm commands before showing them"}},
		{"specificity", "Too generic", goQuick,
			Learned{Reason: "Too generic", Category: Specificity, Keyword: "generic", Action: "Add concrete use cases and scenarios"}},
		{"specificity with a technology", "The Redis section is too generic", goQuick,
			Learned{Reason: "The Redis section is too generic", Category: Specificity, Keyword: "generic", Technologies: []string{"Redis"},
				Action: "Add concrete Redis use cases and scenarios"}},
		{"clarity", "Structure is confusing", RunContext{},
			Learned{Reason: "Structure is confusing", Category: Clarity, Keyword: "confusing", Action: "Simplify language and structure"}},
		{"clarity with a technology", "The Terraform module is confusing", RunContext{},
			Learned{Reason: "The Terraform module is confusing", Category: Clarity, Keyword: "confusing", Technologies: []string{"Terraform"},
				Action: "Simplify language and structure around Terraform"}},
		{"completeness", "Missing configuration section", RunContext{},
			Learned{Reason: "Missing configuration section", Category: Completeness, Keyword: "missing", Action: "Verify all required sections are present"}},
		{"completeness with a technology", "Falta o passo do Postgres", RunContext{},
			Learned{Reason: "Falta o passo do Postgres", Category: Completeness, Keyword: "falta", Technologies: []string{"PostgreSQL"},
				Action: "Verify all required sections are present for PostgreSQL"}},
		{"relevance", "Out of scope", RunContext{},
			Learned{Reason: "Out of scope", Category: Relevance, Keyword: "out of scope", Action: "Ensure artifact matches user request closely"}},
		{"relevance with a technology", "The RabbitMQ part is irrelevant", RunContext{},
			Learned{Reason: "The RabbitMQ part is irrelevant", Category: Relevance, Keyword: "irrelevant", Technologies: []string{"RabbitMQ"},
				Action: "Ensure artifact matches user request closely (RabbitMQ specifically)"}},
		{"a file of the touch set leads", "the lexer.go examples are wrong", RunContext{Profile: "quick", Toolchain: []string{"Go"}, Paths: []string{"pkg/lexer.go"}},
			Learned{Reason: "the lexer.go examples are wrong", Category: Examples, Keyword: "example", Technologies: []string{"lexer.go"},
				Action: "In lexer.go, validate all code examples in Go with the quick verify profile"}},
		{"a file and a tool", "the Redis setup in cache.md is too generic", RunContext{Paths: []string{"docs/cache.md"}},
			Learned{Reason: "the Redis setup in cache.md is too generic", Category: Specificity, Keyword: "generic", Technologies: []string{"Redis", "cache.md"},
				Action: "In cache.md, add concrete Redis use cases and scenarios"}},
		{"other: the first ten words (seed 000 edge case 4)", "I just don't like it", goQuick,
			Learned{Reason: "I just don't like it", Category: Other, Action: "Review: i just don't like it"}},
		{"other: no more than ten words", "One two three four five six seven eight nine ten eleven twelve", RunContext{},
			Learned{Reason: "One two three four five six seven eight nine ten eleven twelve", Category: Other,
				Action: "Review: one two three four five six seven eight nine ten"}},
		{"other: no keyword, even naming a technology", "Applies to RabbitMQ, not Kafka", RunContext{},
			Learned{Reason: "Applies to RabbitMQ, not Kafka", Category: Other, Action: "Review: applies to rabbitmq, not kafka"}},
		{"no reason (seed 000 edge case 1)", "", goQuick,
			Learned{Reason: NoReason, Category: Other, Action: "Review: unclear issue"}},
		{"blank reason", " \n\t", RunContext{},
			Learned{Reason: NoReason, Category: Other, Action: "Review: unclear issue"}},
		{"the no-reason text itself", "No reason provided", RunContext{},
			Learned{Reason: NoReason, Category: Other, Action: "Review: unclear issue"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Default().Learn(tc.reason, tc.rc)); diff != "" {
				t.Errorf("Learn(%q) (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

// TestTechnologies: what counts as a technology named in a reason.
func TestTechnologies(t *testing.T) {
	run := RunContext{
		Commands: []string{"./scripts/check-links docs", "go test ./...", "sh -c true"},
		Paths:    []string{"pkg/parser/parser.go", "docs/kafka-basics.md", "cmd/main.go", "internal/broken.go"},
	}
	for _, tc := range []struct {
		reason string
		rc     RunContext
		want   []string
	}{
		{"The Go examples are wrong", RunContext{}, []string{"Go"}},
		{"Go examples are wrong", RunContext{}, nil},                                  // a sentence's first word
		{"let's go, the examples are wrong", RunContext{}, nil},                       // the verb
		{"examples fail under go test and golang 1.22", RunContext{}, []string{"Go"}}, // once
		{"Node examples are broken. The Node examples, I mean.", RunContext{}, []string{"Node.js"}},
		{"the node.js examples are wrong", RunContext{}, []string{"Node.js"}},
		{"the docker-compose file is wrong", RunContext{}, []string{"Docker Compose"}},
		// "wrong:" only labels the reason: no category, so no technologies.
		{"wrong: docker-compose file", RunContext{}, nil},
		{"the example doesn't react to input", RunContext{}, nil},
		{"the React example is wrong", RunContext{}, []string{"React"}},
		{"postgres, redis, kafka, docker and npm examples: all wrong", RunContext{}, []string{"PostgreSQL", "Redis", "Kafka"}}, // three at most
		{"the parser.go examples are wrong", run, []string{"parser.go"}},
		{"the Kafka examples in kafka-basics.md are wrong", run, []string{"Kafka", "kafka-basics.md"}},
		{"the parser examples are wrong", run, []string{"parser.go"}},
		{"the kafka-basics examples are wrong", run, []string{"kafka-basics.md"}},
		{"check-links output is wrong", run, []string{"check-links"}},
		{"main examples are wrong", run, nil},   // a common stem
		{"the broken link is bad", run, nil},    // a stem that is a keyword
		{"the sh examples are wrong", run, nil}, // two-letter programs are words
		{"the parser examples are wrong", RunContext{}, nil},
	} {
		got := Default().Learn(tc.reason, tc.rc).Technologies
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("technologies of %q (-want +got):\n%s", tc.reason, diff)
		}
	}
}

func TestToolchain(t *testing.T) {
	got := Toolchain([]string{"CGO_ENABLED=0 go test ./...", "go vet ./...", "npm run lint", "npx eslint .",
		"./gradlew build", "env FOO=1 sudo -E cargo test", "./scripts/unknown", "", "/usr/bin/python3 -m pytest"})
	want := []string{"Go", "npm", "Gradle", "Cargo", "Python"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Toolchain (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		rc   RunContext
		want string
	}{
		{RunContext{}, ""},
		{RunContext{Profile: "quick"}, "the quick verify profile"},
		{RunContext{Toolchain: []string{"Go"}}, "Go"},
		{RunContext{Profile: "ci", Toolchain: []string{"Go", "npm", "Docker"}}, "Go, npm and Docker with the ci verify profile"},
	} {
		if got := tc.rc.Environment(); got != tc.want {
			t.Errorf("Environment(%+v) = %q, want %q", tc.rc, got, tc.want)
		}
	}
}

func TestGuessArtifactType(t *testing.T) {
	for _, tc := range []struct {
		paths []string
		want  string
	}{
		{nil, "other"},
		{[]string{"pkg/a.go"}, "code"},
		{[]string{"pkg/a_test.go", "tests/test_x.py", "web/x.spec.ts", "pkg/testdata/in.txt"}, "test"},
		{[]string{"README.md", "docs/guide.html"}, "docs"},
		{[]string{"orket.yaml", ".github/workflows/ci.yml", "go.mod"}, "config"},
		{[]string{"pkg/a.go", "pkg/a_test.go"}, "code"},
	} {
		if got := GuessArtifactType(tc.paths); got != tc.want {
			t.Errorf("GuessArtifactType(%v) = %q, want %q", tc.paths, got, tc.want)
		}
	}
	for _, typ := range ArtifactTypes {
		if err := CheckArtifactType(typ); err != nil {
			t.Error(err)
		}
	}
	if err := CheckArtifactType("skill"); err == nil || !strings.Contains(err.Error(), "code, test, docs, config, other") {
		t.Errorf("CheckArtifactType(skill) = %v", err)
	}
}
