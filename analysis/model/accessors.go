package model

// Thread returns the thread with id (its LWP, or the log's thread
// number), nil when the crash has none.
func (c *Crash) Thread(id int) *Thread {
	for i := range c.Threads {
		if c.Threads[i].ID == id {
			return &c.Threads[i]
		}
	}
	return nil
}

// CrashingThread returns the thread that crashed (the first marked
// Crashed), nil when none did: a live process's core, a log of a hang.
func (c *Crash) CrashingThread() *Thread {
	for i := range c.Threads {
		if c.Threads[i].Crashed {
			return &c.Threads[i]
		}
	}
	return nil
}

// Culprit returns the frame the crash is blamed on: the classification's
// culprit frame on the thread CrashingThreadID selects; nil before
// classification, or when it blames no frame of that thread.
func (c *Crash) Culprit() *Frame {
	t := c.Thread(c.CrashingThreadID)
	cls := c.Classification
	if t == nil || cls == nil || cls.CulpritFrame < 0 || cls.CulpritFrame >= len(t.Frames) {
		return nil
	}
	return &t.Frames[cls.CulpritFrame]
}
