package cudacoretest

// Table rows as cudacoredump.h lays them out. Each Cudbg*TableEntry is a
// flat run of 32- and 64-bit fields; drivers append fields over time
// ("Brief format history" in the header), so a row is written at the size
// asked for: cut short (an older driver) or grown (a newer one, the extra
// bytes 0xA5 so a reader that reads them shows it).

// Layout2015 are the row sizes of the first driver (r346) that wrote
// dumps; Current those of r575 (the fields this package knows).
var (
	Layout2015 = RowSizes{Device: DevRow, Context: CtxRow, Grid: GridRow, SM: SMRow, CTA: CTARow, Warp: WarpRow,
		Lane: LaneRow, Module: ModRow}
	Current = RowSizes{Device: 88, Context: 40, Grid: 136, SM: 40, CTA: 56, Warp: 64, Lane: 56, Module: 8}
)

// Field offsets of the rows (cudacoredump.h, r575).
const (
	// CudbgDeviceTableEntry
	devName, devType, devSMType, devID, devPCIBus, devNumSMs        = 0, 8, 16, 24, 28, 36
	devWarps, devLanes, devRegs, devPreds, devMajor, devMinor       = 40, 44, 48, 52, 56, 60
	devInsnSize, devURegs, devUPreds                                = 64, 72, 76
	ctxID, ctxDevice, ctxTID                                        = 0, 32, 36 // CudbgContextTableEntry
	gridID, gridCtx, gridFunc, gridEntry, gridModule, gridKind      = 0, 8, 16, 24, 32, 56
	gridStatus, gridNumRegs, gridDim, gridBlockDim, gridHostTID     = 64, 68, 72, 84, 100
	smID, smExc, smErrorPCValid, smErrorPC                          = 0, 8, 12, 16 // CudbgSmTableEntry (exception: r555)
	ctaGrid, ctaBlock                                               = 0, 8         // CudbgCTATableEntry
	warpErrorPC, warpID, warpValid, warpActive, warpBroken, warpEPV = 0, 8, 12, 16, 20, 24
	laneVPC, lanePhysPC, laneLn, laneTid, laneException, laneDepth  = 0, 8, 16, 20, 32, 36
	metaDriverMajor, metaCUDAMajor, metaCUDAMinor, metaRowSize      = 8, 16, 20, 32 // CudbgMetaDataEntry (r565)
)

// orCurrent is r with zero sizes replaced by the current ones.
func (r RowSizes) orCurrent() RowSizes {
	return RowSizes{
		Device: orDefault(r.Device, Current.Device), Context: orDefault(r.Context, Current.Context),
		Grid: orDefault(r.Grid, Current.Grid), SM: orDefault(r.SM, Current.SM), CTA: orDefault(r.CTA, Current.CTA),
		Warp: orDefault(r.Warp, Current.Warp), Lane: orDefault(r.Lane, Current.Lane),
		Module: orDefault(r.Module, Current.Module),
	}
}

// or2015 is r with zero sizes replaced by the 2015 ones.
func (r RowSizes) or2015() RowSizes {
	return RowSizes{
		Device: orDefault(r.Device, DevRow), Context: orDefault(r.Context, CtxRow), Grid: orDefault(r.Grid, GridRow),
		SM: orDefault(r.SM, SMRow), CTA: orDefault(r.CTA, CTARow), Warp: orDefault(r.Warp, WarpRow),
		Lane: orDefault(r.Lane, LaneRow), Module: orDefault(r.Module, ModRow),
	}
}

// orDefault is v, or def when v is 0.
func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// field is a value at an offset of a table row.
type field struct {
	off  int
	size int
	v    uint64
}

func u64(off int, v uint64) field { return field{off, 8, v} }
func u32(off int, v uint32) field { return field{off, 4, uint64(v)} }

func dim3(off int, d [3]uint32) []field {
	return []field{u32(off, d[0]), u32(off+4, d[1]), u32(off+8, d[2])}
}

// row is a table row of size bytes with the given fields, laid out in a
// row of the current size cur: a shorter row loses the fields past its
// end, bytes of a longer one past cur are 0xA5.
func row(size, cur int, fs ...field) []byte {
	full := max(size, cur)
	b := make([]byte, full)
	for i := cur; i < full; i++ {
		b[i] = 0xA5
	}
	for _, f := range fs {
		if f.size == 8 {
			le.PutUint64(b[f.off:], f.v)
		} else {
			le.PutUint32(b[f.off:], uint32(f.v))
		}
	}
	return b[:size]
}

// words packs 32-bit words little-endian (register and predicate leaves).
func words(ws []uint32) []byte {
	b := make([]byte, 4*len(ws))
	for i, w := range ws {
		le.PutUint32(b[4*i:], w)
	}
	return b
}

// strtab is a string table being written.
type strtab struct{ b []byte }

// add appends v and returns its offset; "" is offset 0.
func (t *strtab) add(v string) uint64 {
	if v == "" {
		return 0
	}
	off := uint64(len(t.b))
	t.b = append(t.b, v...)
	t.b = append(t.b, 0)
	return off
}
