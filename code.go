package orket

// A Code is the stable machine name of an outcome (docs/codes.md). Codes
// never change meaning once released: agents and CI jobs branch on them,
// and run records keep them.
type Code string

// The outcome codes.
const (
	OK                    Code = "OK"
	EVerifyFailedReverted Code = "E_VERIFY_FAILED_REVERTED"
	EVerifyFailedKept     Code = "E_VERIFY_FAILED_KEPT"
	EVerifyFailed         Code = "E_VERIFY_FAILED"
	EDraftFailure         Code = "E_DRAFT_FAILURE"
	ECommitRefused        Code = "E_COMMIT_REFUSED"
	EClassifyTestFailed   Code = "E_CLASSIFY_TEST_FAILED"
	ENotReady             Code = "E_NOT_READY"
	EUsage                Code = "E_USAGE"
	EConfigInvalid        Code = "E_CONFIG_INVALID"
	EGitRequired          Code = "E_GIT_REQUIRED"
	ERepoUnsupported      Code = "E_REPO_UNSUPPORTED"
	EConfirmationRequired Code = "E_CONFIRMATION_REQUIRED"
	EPatchInvalid         Code = "E_PATCH_INVALID"
	EScopeRequired        Code = "E_SCOPE_REQUIRED"
	ETouchsetEmpty        Code = "E_TOUCHSET_EMPTY"
	EWriteOutOfScope      Code = "E_WRITE_OUT_OF_SCOPE"
	EWriteProtected       Code = "E_WRITE_PROTECTED"
	ESandboxUnavailable   Code = "E_SANDBOX_UNAVAILABLE"
	EPreflightFailed      Code = "E_PREFLIGHT_FAILED"
	ELocked               Code = "E_LOCKED"
	ERecoveryNeeded       Code = "E_RECOVERY_NEEDED"
	EEscalated            Code = "E_ESCALATED"
	EBaselineRed          Code = "E_BASELINE_RED"
	ESyncUnreachable      Code = "E_SYNC_UNREACHABLE"
	ESyncAuth             Code = "E_SYNC_AUTH"
	ESyncContention       Code = "E_SYNC_CONTENTION"
	ESyncRefused          Code = "E_SYNC_REFUSED"
	ESyncDamaged          Code = "E_SYNC_DAMAGED"
	EInterrupted          Code = "E_INTERRUPTED"
	EIO                   Code = "E_IO"
	EInternal             Code = "E_INTERNAL"
)

// codes is the one table of outcomes: exit status and a one-line meaning.
// E_INTERRUPTED's status depends on the signal (130 for SIGINT, 143 for
// SIGTERM); the table holds the SIGINT value.
var codes = map[Code]codeInfo{
	OK:                    {OK, 0, "the run passed; the change (if any) is kept"},
	EVerifyFailedReverted: {EVerifyFailedReverted, 1, "verification failed; the change was reverted and a lesson recorded"},
	EVerifyFailedKept:     {EVerifyFailedKept, 1, "verification failed; the change was kept (--keep-on-fail) and a lesson recorded"},
	EVerifyFailed:         {EVerifyFailed, 1, "verification failed on a verify-only run; a lesson was recorded"},
	EDraftFailure:         {EDraftFailure, 1, "the edit command exited non-zero; its changes were reverted and a lesson recorded"},
	ECommitRefused:        {ECommitRefused, 1, "verification passed and the change is kept, but git refused the commit (a hook, signing, identity)"},
	EClassifyTestFailed:   {EClassifyTestFailed, 1, "orket classify --test: a saved log was not classified as its expectation says"},
	ENotReady:             {ENotReady, 1, "orket doctor: the repository is not ready for agents (a required step fails on HEAD, a tool is missing, a runtime is not the one asked for)"},
	EUsage:                {EUsage, 2, "the command line is wrong"},
	EConfigInvalid:        {EConfigInvalid, 2, "orket.yaml is invalid"},
	EGitRequired:          {EGitRequired, 2, "not inside a git work tree"},
	ERepoUnsupported:      {ERepoUnsupported, 2, "the repository uses a setting orket cannot honour exactly"},
	EConfirmationRequired: {EConfirmationRequired, 2, "a mutating run needs confirmation and there is no terminal"},
	EPatchInvalid:         {EPatchInvalid, 2, "the patch does not parse or does not apply; nothing was written"},
	EScopeRequired:        {EScopeRequired, 3, "a mutating run needs --scope (or scope in orket.yaml)"},
	ETouchsetEmpty:        {ETouchsetEmpty, 3, "the edit changed nothing"},
	EWriteOutOfScope:      {EWriteOutOfScope, 3, "the edit wrote outside its scope; it was reverted"},
	EWriteProtected:       {EWriteProtected, 3, "the edit modified or deleted a protected path (protect: in orket.yaml); it was reverted"},
	ESandboxUnavailable:   {ESandboxUnavailable, 2, "sandbox: required, and the kernel sandbox is unavailable; nothing was written"},
	EPreflightFailed:      {EPreflightFailed, 4, "a preflight check failed in strict mode; nothing was written"},
	ELocked:               {ELocked, 5, "another orket run holds the repository lock"},
	ERecoveryNeeded:       {ERecoveryNeeded, 5, "an interrupted transaction must be recovered first"},
	EEscalated:            {EEscalated, 6, "the task is escalated to a person: this run was its last rejected attempt (reverted, its lesson recorded), or it stopped before the snapshot, writing nothing"},
	EBaselineRed:          {EBaselineRed, 8, "the task's failing steps failed without the change too, two runs in a row: main or the environment is broken, not the agent; the task is escalated to a person (report) and its runs stop until orket task resolve"},
	ESyncUnreachable:      {ESyncUnreachable, 7, "orket sync could not reach the remote (network, address, no repository there); nothing changed on either side"},
	ESyncAuth:             {ESyncAuth, 7, "orket sync: the remote refused the credentials git would use, or its ssh host key is not known"},
	ESyncContention:       {ESyncContention, 7, "orket sync: other clones kept pushing first; the merge is in the local memory and the next sync publishes it"},
	ESyncRefused:          {ESyncRefused, 7, "orket sync: the remote refused to update refs/orket/memory (a hook, a protected or hidden ref); the merge is in the local memory"},
	ESyncDamaged:          {ESyncDamaged, 7, "orket sync: a memory ref holds a tree orket never writes (a name with a slash, a symlink...); it was refused before anything was read, and nothing changed on either side"},
	EInterrupted:          {EInterrupted, 130, "interrupted by SIGINT (130) or SIGTERM (143); the change was reverted"},
	EIO:                   {EIO, 74, "a file system refused orket's write: no space left, quota exceeded, read-only, or an I/O error; what orket was doing is named, and what it did not finish says so"},
	EInternal:             {EInternal, 70, "orket failed internally"},
}

// codeInfo describes a code.
type codeInfo struct {
	Code    Code
	Exit    int
	Meaning string
}

// Exit returns the code's exit status (E_INTERNAL's for an unknown code).
func (c Code) Exit() int {
	if e, ok := codes[c]; ok {
		return e.Exit
	}
	return codes[EInternal].Exit
}
