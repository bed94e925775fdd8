// Package gitrepo reads and writes the parts of a git repository that
// orket handles itself rather than through go-git, one copy for every
// package that needs them (txn, guardrails, memsync):
//
//   - ignore rules: core.excludesFile, info/exclude and .gitignore files
//     read as git reads them (matching is internal/gitignore's);
//   - the index: its entries and its cache tree, decoded in place;
//   - refs: read loose or packed, and written with git's lock-file
//     protocol (name.lock created exclusively, fsynced, renamed over the
//     ref), as a compare-and-swap where asked, each move written to the
//     reflog where git would write it (core.logAllRefUpdates);
//   - objects: fsynced once written, so that nothing names an object a
//     crash could lose.
//
// Why orket reads these itself, and where go-git is used instead, is
// said in txn's package comment.
package gitrepo
