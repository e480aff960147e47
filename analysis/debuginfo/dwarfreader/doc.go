// Package dwarfreader is faultline's own DWARF reader: abbreviation tables,
// DIEs read attribute by attribute with first-error-sticks cursors, the
// index of units by address range (.debug_aranges or the units' own ranges,
// kept in the persistent index cache), unit trees decoded lazily for the
// units a looked-up pc falls in, range lists (.debug_ranges, .debug_rnglists),
// call-site records, and split DWARF: skeleton units, .dwo files and .dwp
// packages.
//
// Readers never import their users: it imports only object, dwarfform,
// dwarfline and dwpindex of analysis/debuginfo (internal/archtest).
package dwarfreader
