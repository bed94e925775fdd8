package feedback

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// keywordSentences puts every keyword of the built-in lists in a
// sentence, as reviewers write them: Portuguese with its accents, English
// with straight and curly apostrophes. No sentence holds a keyword of a
// higher-priority category.
var keywordSentences = []struct {
	lang, keyword, sentence string
	want                    Category
}{
	{"pt", "exemplo", "O exemplo da seção de instalação não compila.", Examples},
	{"pt", "errado", "O comando está errado.", Examples},
	{"pt", "nao funciona", "O script não funciona no Windows!", Examples},
	{"pt", "incorreto", "O resultado é incorreto.", Examples},
	{"pt", "falha", "O teste falha sempre que roda em paralelo.", Examples},
	{"pt", "quebrado", "O link está quebrado.", Examples},
	{"en", "example", "The example in the README needs work.", Examples},
	{"en", "wrong", "This is the wrong approach.", Examples},
	{"en", "doesn't work", "The install step doesn’t work on macOS.", Examples},
	{"en", "incorrect", "The output is incorrect.", Examples},
	{"en", "fails", "The build fails on CI.", Examples},
	{"en", "broken", "The link is broken.", Examples},
	{"en", "error", "It throws an error on startup.", Examples},
	{"en", "bug", "There is a bug in the parser.", Examples},

	{"pt", "generico", "O texto é genérico demais.", Specificity},
	{"pt", "vago", "Ficou vago, sem nada concreto.", Specificity},
	{"pt", "superficial", "A análise é superficial.", Specificity},
	{"pt", "raso", "O conteúdo é raso.", Specificity},
	{"pt", "amplo", "O escopo é amplo demais.", Specificity},
	{"en", "generic", "Too generic for our use.", Specificity},
	{"en", "vague", "The description is vague.", Specificity},
	{"en", "shallow", "The analysis is shallow.", Specificity},
	{"en", "broad", "The change is too broad.", Specificity},
	{"en", "too general", "The advice is too general to act on.", Specificity},
	{"en", "not specific", "The plan is not specific enough.", Specificity},

	{"pt", "confuso", "O texto ficou confuso.", Clarity},
	{"pt", "nao entendi", "Não entendi a proposta.", Clarity},
	{"pt", "ambiguo", "O nome é ambíguo.", Clarity},
	{"pt", "complicado", "O fluxo é complicado.", Clarity},
	{"pt", "dificil de entender", "O código é difícil de entender.", Clarity},
	{"en", "confusing", "The naming is confusing.", Clarity},
	{"en", "unclear", "The intent is unclear.", Clarity},
	{"en", "ambiguous", "The API is ambiguous.", Clarity},
	{"en", "complicated", "The setup is complicated.", Clarity},
	{"en", "hard to understand", "The function is hard to understand.", Clarity},
	{"en", "convoluted", "The control flow is convoluted.", Clarity},

	{"pt", "falta", "Falta a seção de configuração.", Completeness},
	{"pt", "incompleto", "O guia está incompleto.", Completeness},
	{"pt", "ausente", "O tratamento de timeout está ausente.", Completeness},
	{"pt", "faltando", "Está faltando o teste.", Completeness},
	{"pt", "nao tem", "O README não tem instruções.", Completeness},
	{"en", "missing", "The migration is missing.", Completeness},
	{"en", "incomplete", "The docs are incomplete.", Completeness},
	{"en", "absent", "Input validation is absent.", Completeness},
	{"en", "lacks", "The change lacks tests.", Completeness},
	{"en", "doesn't have", "The handler doesn't have a timeout.", Completeness},
	{"en", "not present", "The license header is not present.", Completeness},

	{"pt", "nao aplica", "Essa regra não aplica aqui.", Relevance},
	{"pt", "fora do escopo", "Isso está fora do escopo.", Relevance},
	{"pt", "irrelevante", "A mudança é irrelevante.", Relevance},
	{"pt", "nao relacionado", "O commit é não relacionado à tarefa.", Relevance},
	{"en", "not applicable", "This is not applicable to our service.", Relevance},
	{"en", "out of scope", "The refactor is out of scope.", Relevance},
	{"en", "irrelevant", "The comment is irrelevant.", Relevance},
	{"en", "unrelated", "The change is unrelated to the ticket.", Relevance},
	{"en", "doesn't apply", "The rule doesn´t apply here.", Relevance},
}

// TestEveryKeyword: each keyword of both reference lists, inside a
// sentence, gives its category and is named as the keyword that matched.
func TestEveryKeyword(t *testing.T) {
	covered := map[string]bool{}
	for _, tc := range keywordSentences {
		covered[tc.lang+"/"+tc.keyword] = true
		t.Run(tc.lang+"/"+tc.keyword, func(t *testing.T) {
			want := Match{Category: tc.want, Keyword: tc.keyword}
			if diff := cmp.Diff(want, Categorize(tc.sentence)); diff != "" {
				t.Errorf("Categorize(%q) (-want +got):\n%s", tc.sentence, diff)
			}
		})
	}
	// The table covers the lists whole, so a keyword added to or lost
	// from them is noticed.
	for cat, l := range Keywords {
		for _, k := range l.PT {
			if !covered["pt/"+k] {
				t.Errorf("%s keyword %q (pt) has no sentence", cat, k)
			}
		}
		for _, k := range l.EN {
			if !covered["en/"+k] {
				t.Errorf("%s keyword %q (en) has no sentence", cat, k)
			}
		}
	}
	if n := len(keywordSentences); n != 56 {
		t.Errorf("%d sentences, want one per keyword of seed 000 (56)", n)
	}
}

// TestSeedKeywordLists: the lists are docs/feedback.md's table, verbatim
// and in order.
func TestSeedKeywordLists(t *testing.T) {
	seed := map[Category][2]string{
		Examples:     {"exemplo, errado, nao funciona, incorreto, falha, quebrado", "example, wrong, doesn't work, incorrect, fails, broken, error, bug"},
		Specificity:  {"generico, vago, superficial, raso, amplo", "generic, vague, shallow, broad, too general, not specific"},
		Clarity:      {"confuso, nao entendi, ambiguo, complicado, dificil de entender", "confusing, unclear, ambiguous, complicated, hard to understand, convoluted"},
		Completeness: {"falta, incompleto, ausente, faltando, nao tem", "missing, incomplete, absent, lacks, doesn't have, not present"},
		Relevance:    {"nao aplica, fora do escopo, irrelevante, nao relacionado", "not applicable, out of scope, irrelevant, unrelated, doesn't apply"},
	}
	if len(Keywords) != len(seed) {
		t.Fatalf("%d categories with keywords, want %d", len(Keywords), len(seed))
	}
	for cat, want := range seed {
		l := Keywords[cat]
		if got := strings.Join(l.PT, ", "); got != want[0] {
			t.Errorf("%s PT = %s, want %s", cat, got, want[0])
		}
		if got := strings.Join(l.EN, ", "); got != want[1] {
			t.Errorf("%s EN = %s, want %s", cat, got, want[1])
		}
	}
	if diff := cmp.Diff([]Category{"examples", "specificity", "clarity", "completeness", "relevance", "other"}, Categories); diff != "" {
		t.Errorf("priority order (-want +got):\n%s", diff)
	}
}

func TestNormalize(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Não funciona!", "nao funciona"},
		{"nao   funciona", "nao funciona"},
		{"doesn't work", "doesnt work"},
		{"doesn’t work", "doesnt work"},
		{"doesn`t work", "doesnt work"},
		{"DOESN'T WORK", "doesnt work"},
		{"Hard-to-understand", "hard to understand"},
		{"ÉRRADO, genérico; ambíguo.", "errado generico ambiguo"},
		{"na\u0303o funciona", "nao funciona"}, // decomposed accent
		{"Ação: coração, pão, çedilha", "acao coracao pao cedilha"},
		{"Straße Æsir œuvre", "strasse aesir oeuvre"},
		{"node.js v1.5 (beta)", "node js v1 5 beta"},
		{"line\nbreak\ttab", "line break tab"},
		{"日本語 テスト", "日本語 テスト"},
		{"", ""},
		{"¿¡!?", ""},
	} {
		if got := Normalize(tc.in); got != tc.want {
			t.Errorf("Normalize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestCategorize(t *testing.T) {
	for _, tc := range []struct {
		reason string
		want   Match
	}{
		// plurals and agreement
		{"Examples don't work", Match{Examples, "example"}},
		{"Kafka examples return errors", Match{Examples, "example"}},
		{"Several bugs remain", Match{Examples, "bug"}},
		{"The errors are not handled", Match{Examples, "error"}},
		{"Os exemplos estão desatualizados", Match{Examples, "exemplo"}},
		{"A resposta está errada", Match{Examples, "errado"}},
		{"As instruções estão erradas", Match{Examples, "errado"}},
		{"A documentação está incompleta", Match{Completeness, "incompleto"}},
		{"As explicações são superficiais", Match{Specificity, "superficial"}},
		{"Ambiguities everywhere", Match{Other, ""}},
		// apostrophes and accents, either way
		{"doesnt work", Match{Examples, "doesn't work"}},
		{"nao funciona", Match{Examples, "nao funciona"}},
		{"NÃO FUNCIONA", Match{Examples, "nao funciona"}},
		{"It doesn’t have tests", Match{Completeness, "doesn't have"}},
		// whole words only
		{"debugging output is noisy", Match{Other, ""}},
		{"a broadcast storm", Match{Other, ""}},
		{"terrorism is not the topic", Match{Other, ""}},
		{"the falhanço", Match{Other, ""}},
		// phrases must be whole and in order
		{"too much, general remarks", Match{Other, ""}},
		{"hard to really understand", Match{Other, ""}},
		{"it does not work", Match{Other, ""}},
		// priority: examples > specificity > clarity > completeness > relevance
		{"Examples are vague and incomplete", Match{Examples, "example"}},
		{"Too generic and confusing", Match{Specificity, "generic"}},
		{"Missing sections, and the rest is unclear", Match{Clarity, "unclear"}},
		{"Out of scope and incomplete", Match{Completeness, "incomplete"}},
		{"Irrelevant. Also wrong.", Match{Examples, "wrong"}},
		{"wrong: api/openapi.yaml is the API team's", Match{Other, ""}},
		{"Wrong: the examples do not run", Match{Examples, "example"}},
		// the first keyword of the winning category is named
		{"missing tests and absent docs", Match{Completeness, "missing"}},
		// nothing
		{"I just don't like it", Match{Other, ""}},
		{"", Match{Other, ""}},
		{"   ", Match{Other, ""}},
	} {
		if diff := cmp.Diff(tc.want, Categorize(tc.reason)); diff != "" {
			t.Errorf("Categorize(%q) (-want +got):\n%s", tc.reason, diff)
		}
	}
}

func TestExtraKeywords(t *testing.T) {
	c, err := NewCategorizer(map[string][]string{
		"relevance": {"off-topic", "não é o que pedi"},
		"Examples":  {"flaky snippet"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		reason string
		want   Match
	}{
		{"This is off topic.", Match{Relevance, "off-topic"}},
		{"Off-topics everywhere", Match{Relevance, "off-topic"}},
		{"Nao e o que pedi", Match{Relevance, "não é o que pedi"}},
		{"a flaky snippets section", Match{Examples, "flaky snippet"}},
		{"off-topic and confusing", Match{Clarity, "confusing"}},
		{"The docs are wrong", Match{Examples, "wrong"}},
	} {
		if diff := cmp.Diff(tc.want, c.Categorize(tc.reason)); diff != "" {
			t.Errorf("Categorize(%q) (-want +got):\n%s", tc.reason, diff)
		}
	}
	// The default categorizer is not changed by another's extras.
	if got := Categorize("This is off topic."); got.Category != Other {
		t.Errorf("default categorizer took an extra keyword: %v", got)
	}
	for _, bad := range []map[string][]string{
		{"style": {"tabs"}},
		{"other": {"meh"}},
		{"clarity": {"!!!"}},
	} {
		if _, err := NewCategorizer(bad); err == nil {
			t.Errorf("NewCategorizer(%v) accepted", bad)
		}
	}
}
