package analysis

// GPU describes a GPU-side crash: the device, the kernel and where in it the
// fault happened, with the full inline chain of the faulting pc.
type GPU struct {
	Device    string `json:"device,omitempty"`
	Kernel    string `json:"kernel,omitempty"`
	Exception string `json:"exception,omitempty"`
	ErrorPC   string `json:"errorPC,omitempty"`
	// Frames is the inline chain at ErrorPC, innermost first.
	Frames []Frame `json:"frames,omitempty"`
}
