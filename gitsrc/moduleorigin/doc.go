// Package moduleorigin finds a module's upstream without configuration:
// what the module file says of itself (the .note.package of the systemd
// ELF package metadata spec; the version clues of its real file name,
// symbol-version definitions and version strings), what a Python
// installation says of the package it belongs to (dist-info METADATA,
// PEP 610 direct_url.json, version.py), and the built-in registry of
// well-known upstreams: the ML stacks, ROCm and the common libraries, each
// with its repository, default branch and the tag convention its releases
// are cut with.
//
// gitsrc's inventory combines these with the package databases
// (gitsrc/pkgdb) and the user's configuration into components.
package moduleorigin
