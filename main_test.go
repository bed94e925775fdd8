package orket_test

import (
	"os"
	"testing"

	"github.com/orket/orket/internal/gittest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	gittest.RemoveAll()
	os.Exit(code)
}
