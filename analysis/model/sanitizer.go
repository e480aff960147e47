package model

// SanitizerReport is what a sanitizer runtime (AddressSanitizer) printed
// about the crash, read from its log given with the core.
type SanitizerReport struct {
	Tool string `json:"tool"` // "AddressSanitizer"
	// Bug is the runtime's bug type: "heap-use-after-free", ...
	Bug     string `json:"bug"`
	Address string `json:"address,omitempty"`
	// Access is "read" or "write", Size its width in bytes.
	Access string `json:"access,omitempty"`
	Size   int    `json:"size,omitempty"`
	// AllocatedAt and FreedAt are the first program frames of the
	// allocation and free stacks: "main (asan.c:22)".
	AllocatedAt string `json:"allocatedAt,omitempty"`
	FreedAt     string `json:"freedAt,omitempty"`
	// Log is the path of the log it was read from.
	Log string `json:"log"`
}
