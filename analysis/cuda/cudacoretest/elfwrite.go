package cudacoretest

// writeELF lays out an ELF64 core (ELFOSABI_CUDA) with the given sections
// after a null section; section names go to the first section.
func writeELF(secs []section) []byte {
	var shstr []byte
	shstr = append(shstr, 0)
	names := make([]uint32, len(secs))
	for i, s := range secs {
		names[i] = uint32(len(shstr))
		shstr = append(shstr, s.name...)
		shstr = append(shstr, 0)
	}
	secs[0].data = shstr
	out := make([]byte, 64)
	offs := make([]uint64, len(secs))
	for i, s := range secs {
		for len(out)%8 != 0 {
			out = append(out, 0)
		}
		offs[i] = uint64(len(out))
		out = append(out, s.data...)
	}
	for len(out)%8 != 0 {
		out = append(out, 0)
	}
	shoff := uint64(len(out))
	out = append(out, make([]byte, 64*(len(secs)+1))...)
	for i, s := range secs {
		h := out[shoff+uint64(i+1)*64:]
		le.PutUint32(h[0:], names[i])
		le.PutUint32(h[4:], s.typ)
		le.PutUint64(h[16:], s.addr)
		le.PutUint64(h[24:], offs[i])
		size := uint64(len(s.data))
		if s.size != 0 {
			size = s.size
		}
		le.PutUint64(h[32:], size)
		le.PutUint32(h[40:], s.link)
		le.PutUint32(h[44:], s.info)
		le.PutUint64(h[48:], max(s.addralign, 1))
		le.PutUint64(h[56:], s.entsize)
	}
	copy(out, "\x7fELF")
	out[4], out[5], out[6], out[7], out[8] = 2, 1, 1, 0x33, 7 // ELF64, LSB, EV_CURRENT, ELFOSABI_CUDA, ABI 7
	le.PutUint16(out[16:], 4)                                 // ET_CORE
	le.PutUint16(out[18:], 190)                               // EM_CUDA
	le.PutUint32(out[20:], 1)
	le.PutUint64(out[40:], shoff)
	le.PutUint16(out[52:], 64)
	le.PutUint16(out[58:], 64)
	le.PutUint16(out[60:], uint16(len(secs)+1))
	le.PutUint16(out[62:], 1) // .shstrtab
	return out
}
