package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDetect(t *testing.T) {
	type step struct{ Name, Cmd, Dir string }
	for _, tc := range []struct {
		dir   string
		found []string
		steps []step
	}{
		{"go", []string{"go.mod"}, []step{{"go-vet", "go vet ./...", ""}, {"go-test", "go test ./...", ""}}},
		// The nested pnpm package belongs to the outer workspace.
		{"node", []string{"package.json"}, []step{
			{"npm-lint", "npm run lint", ""}, {"npm-typecheck", "npm run typecheck", ""}, {"npm-test", "npm run test", ""}}},
		// npm's placeholder test script is not a test.
		{"node/pnpm", []string{"package.json"}, []step{{"pnpm-lint", "pnpm run lint", ""}}},
		{"rust", []string{"Cargo.toml"}, []step{{"cargo-test", "cargo test", ""}}},
		{"python", []string{"pyproject.toml"}, []step{{"ruff", "ruff check .", ""}, {"pytest", "python3 -m pytest", ""}}},
		// A Makefile test target replaces the ecosystem's test step.
		{"make", []string{"go.mod", "Makefile"}, []step{{"go-vet", "go vet ./...", ""}, {"make-test", "make test", ""}}},
		{"monorepo", []string{"go.mod", "services/billing/pytest.ini", "web/package.json"}, []step{
			{"go-vet", "go vet ./...", ""}, {"go-test", "go test ./...", ""},
			{"services/billing:pytest", "python3 -m pytest", "services/billing"},
			{"web:yarn-test", "yarn run test", "web"}}},
		{"empty", nil, nil},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			det, err := Detect("testdata/detect/" + tc.dir)
			if err != nil {
				t.Fatal(err)
			}
			var got []step
			for _, s := range det.Steps {
				got = append(got, step{s.Name, s.Command(), s.Dir})
			}
			if diff := cmp.Diff(tc.steps, got); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.found, det.Found); diff != "" {
				t.Errorf("found (-want +got):\n%s", diff)
			}
			// What init writes for it loads, and runs the same steps.
			c, err := Parse(Render(det), "orket.yaml")
			if err != nil {
				t.Fatalf("rendered orket.yaml does not load: %v\n%s", err, Render(det))
			}
			r, _ := c.Profile("")
			if len(tc.steps) > 0 && len(r.Steps) != len(tc.steps) {
				t.Errorf("rendered profile has %d steps, want %d", len(r.Steps), len(tc.steps))
			}
			for i := range tc.steps {
				if i < len(r.Steps) && (r.Steps[i].Command() != tc.steps[i].Cmd || r.Steps[i].Dir != tc.steps[i].Dir) {
					t.Errorf("rendered step %d: %+v", i, r.Steps[i])
				}
			}
		})
	}
}

func TestDetectedNothing(t *testing.T) {
	_, err := Detected("testdata/detect/empty")
	if _, ok := err.(*Error); !ok {
		t.Fatalf("Detected on an empty repository: %v", err)
	}
}
