package model

// Package is a distribution package a crash reporter recorded with the
// core, at the version installed when the program crashed: apport's
// Package and Dependencies fields, an ABRT problem directory's package and
// dso_list. The component inventory (gitsrc) takes these over guessing.
type Package struct {
	// Name is the binary package's name (libc6, glibc).
	Name string `json:"name"`
	// Version is the installed version, as the package manager writes it
	// (2.35-0ubuntu3.8, 2.38-16.fc39); "" when apport says "(not installed)".
	Version string `json:"version,omitempty"`
	// Origin is where the fact comes from: "apport" or "abrt".
	Origin string `json:"origin"`
	// Program marks the crashed program's own package (apport Package,
	// ABRT package).
	Program bool `json:"program,omitempty"`
	// Source is the source package (apport SourcePackage, ABRT component).
	Source string `json:"source,omitempty"`
	// Arch is the package's architecture, when recorded.
	Arch string `json:"arch,omitempty"`
	// Archive is where the package was installed from, when the reporter
	// says: apport's "[origin: …]" (a PPA, "unknown"; apport names none for
	// the distribution's own archive), ABRT's vendor ("Fedora Project").
	Archive string `json:"archive,omitempty"`
	// Modified are the package's files that differ from what it shipped
	// (apport's "[modified: …]").
	Modified []string `json:"modified,omitempty"`
	// Files are the modules of the core the package provides, when the
	// reporter lists them (ABRT's dso_list).
	Files []string `json:"files,omitempty"`
}
