package dwarfform

// Form is an attribute form code (DWARF 5 §7.5.6, Table 7.6).
type Form uint16

const (
	FormAddr          Form = 0x01
	FormBlock2        Form = 0x03
	FormBlock4        Form = 0x04
	FormData2         Form = 0x05
	FormData4         Form = 0x06
	FormData8         Form = 0x07
	FormString        Form = 0x08
	FormBlock         Form = 0x09
	FormBlock1        Form = 0x0a
	FormData1         Form = 0x0b
	FormFlag          Form = 0x0c
	FormSdata         Form = 0x0d
	FormStrp          Form = 0x0e
	FormUdata         Form = 0x0f
	FormRefAddr       Form = 0x10
	FormRef1          Form = 0x11
	FormRef2          Form = 0x12
	FormRef4          Form = 0x13
	FormRef8          Form = 0x14
	FormRefUdata      Form = 0x15
	FormIndirect      Form = 0x16
	FormSecOffset     Form = 0x17
	FormExprloc       Form = 0x18
	FormFlagPresent   Form = 0x19
	FormStrx          Form = 0x1a
	FormAddrx         Form = 0x1b
	FormRefSup4       Form = 0x1c
	FormStrpSup       Form = 0x1d
	FormData16        Form = 0x1e
	FormLineStrp      Form = 0x1f
	FormRefSig8       Form = 0x20
	FormImplicitConst Form = 0x21
	FormLoclistx      Form = 0x22
	FormRnglistx      Form = 0x23
	FormRefSup8       Form = 0x24
	FormStrx1         Form = 0x25
	FormStrx2         Form = 0x26
	FormStrx3         Form = 0x27
	FormStrx4         Form = 0x28
	FormAddrx1        Form = 0x29
	FormAddrx2        Form = 0x2a
	FormAddrx3        Form = 0x2b
	FormAddrx4        Form = 0x2c
	// GNU extensions (gcc's include/dwarf2.def): Fission indexes (DWARF 4
	// split units) and references into a dwz supplementary file.
	FormGNUAddrIndex Form = 0x1f01
	FormGNUStrIndex  Form = 0x1f02
	FormGNURefAlt    Form = 0x1f20
	FormGNUStrpAlt   Form = 0x1f21
)
