package imports

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestOf(t *testing.T) {
	repo := map[string]bool{}
	for _, p := range []string{
		"src/notify/mailer.js", "src/cache/client.js", "src/codegen.ts", "src/http/index.js", "lib/util.cjs",
		"invoice/__init__.py", "invoice/billing/__init__.py", "invoice/billing/charges.py", "invoice/users/accounts.py",
		"invoice/web/pages.py", "tests/helpers.py", "tests/test_web.py", "src/shelf/loans.py", "tests/unit/conftest.py",
	} {
		repo[p] = true
	}
	exists := func(p string) bool { return repo[p] }
	for _, tc := range []struct {
		file, src string
		want      []string
	}{
		{"test/infra.test.js", `import test from 'node:test';
import { ping } from '../src/cache/client.js';
import { compose } from "../src/notify/mailer.js";
import '../src/missing.js';
`, []string{"src/cache/client.js", "src/notify/mailer.js"}},
		{"test/a.test.ts", `import { TARGETS } from '../src/codegen.js'; // TypeScript names its .ts by .js
export { start } from '../src/http';
const u = require( '../lib/util.cjs' );
const lazy = await import('../src/notify/mailer');
const dep = require('lodash');`, []string{"src/codegen.ts", "src/http/index.js", "lib/util.cjs", "src/notify/mailer.js"}},
		{"test/escape.test.js", `import x from '../../../etc/passwd';`, nil},
		{"tests/test_billing.py", `import os, invoice.billing.charges as charges
from invoice.users import accounts
from invoice.web.pages import render_invoice  # a function, its module
from invoice import (
    billing,
    web,
)
from . import helpers
import json
`, []string{"invoice/billing/charges.py", "invoice/users/accounts.py", "invoice/web/pages.py", "invoice/__init__.py",
			"invoice/billing/__init__.py", "tests/helpers.py"}},
		{"tests/unit/test_loans.py", `from shelf.loans import lend
from .. import test_web
from .conftest import fixture`, []string{"src/shelf/loans.py", "tests/test_web.py", "tests/unit/conftest.py"}},
		{"pkg/api/api_test.go", `import "example.com/x/pkg/store"`, nil},
	} {
		t.Run(tc.file, func(t *testing.T) {
			if d := cmp.Diff(tc.want, Of(tc.file, []byte(tc.src), exists)); d != "" {
				t.Errorf("Of (-want +got):\n%s", d)
			}
		})
	}
}
