package rustdemangle

import "testing"

// libibertyVectors are the Rust cases of libiberty's test suite
// (GCC, libiberty/testsuite/rust-demangle-expected, GPL-3.0-or-later test
// data; the gdb and c++filt demangler), read through the search tool from
// al43595/gcc @343c5d82. They are libiberty's default output: no hash, no
// crate disambiguators (c++filt -i, gdb's DWARF-side names). The cases
// that expect a name left mangled or demangled as C++ are in
// notRust below.
var libibertyVectors = []struct{ in, want string }{
	{"_ZN4main4main17he714a2e23ed7db23E", "main::main"},
	{"_ZN71_$LT$Test$u20$$u2b$$u20$$u27$static$u20$as$u20$foo..Bar$LT$Test$GT$$GT$3bar17h930b740aa94f1d3aE", "<Test + 'static as foo::Bar<Test>>::bar"},
	{"_ZN54_$LT$I$u20$as$u20$core..iter..traits..IntoIterator$GT$9into_iter17h8581507801fb8615E", "<I as core::iter::traits::IntoIterator>::into_iter"},
	{"_ZN10parse_tsan4main17hdbbfdf1c6a7e27d9E", "parse_tsan::main"},
	{"_ZN65_$LT$std..env..Args$u20$as$u20$core..iter..iterator..Iterator$GT$4next17h420a7c8d0c7eef40E", "<std::env::Args as core::iter::iterator::Iterator>::next"},
	{"_ZN4core3str9from_utf817hdcea28871313776dE", "core::str::from_utf8"},
	{"_ZN4core3ptr31_$LT$impl$u20$$BP$mut$u20$T$GT$7is_null17h7f9de798bc3f0879E", "core::ptr::<impl *mut T>::is_null"},
	{"_ZN40_$LT$alloc..raw_vec..RawVec$LT$T$GT$$GT$6double17h4166e2b47539e1ffE", "<alloc::raw_vec::RawVec<T>>::double"},
	{"_ZN70_$LT$collections..vec..Vec$LT$T$GT$$u20$as$u20$core..ops..DerefMut$GT$9deref_mut17hf299b860dc5a831cE", "<collections::vec::Vec<T> as core::ops::DerefMut>::deref_mut"},
	{"_ZN53_$LT$$u5b$T$u5d$$u20$as$u20$core..slice..SliceExt$GT$10as_mut_ptr17h153241df1c7d1666E", "<[T] as core::slice::SliceExt>::as_mut_ptr"},
	{"_ZN11collections5slice29_$LT$impl$u20$$u5b$T$u5d$$GT$10as_mut_ptr17hf12a6d0409938c96E", "collections::slice::<impl [T]>::as_mut_ptr"},
	{"_ZN75_$LT$$RF$$u27$a$u20$mut$u20$I$u20$as$u20$core..iter..iterator..Iterator$GT$4next17ha050492063e0fd20E", "<&'a mut I as core::iter::iterator::Iterator>::next"},
	{"_ZN13drop_contents17hfe3c0a68c8ad1c74E", "drop_contents"},
	{"_ZN11issue_609253foo37Foo$LT$issue_60925..llv$u6d$..Foo$GT$3foo17h059a991a004536adE", "issue_60925::foo::Foo<issue_60925::llvm::Foo>::foo"},
	{"_ZN4core3ops8function6FnOnce40call_once$u7b$$u7b$vtable.shim$u7d$$u7d$17h000b1ad6c4f30bd6E", "core::ops::function::FnOnce::call_once{{vtable.shim}}"},
	{"_ZN4main4$99$17he714a2e23ed7db23E", "main::$99$"},
	{"_RNvC6_123foo3bar", "123foo::bar"},
	{"_RNqCs4fqI2P2rA04_11utf8_identsu30____7hkackfecea1cbdathfdh9hlq6y", "utf8_idents::საჭმელად_გემრიელი_სადილი"},
	{"_RNCNCNgCs6DXkGYLi8lr_2cc5spawn00B5_", "cc::spawn::{closure#0}::{closure#0}"},
	{"_RNCINkXs25_NgCsbmNqQUJIY6D_4core5sliceINyB9_4IterhENuNgNoBb_4iter8iterator8Iterator9rpositionNCNgNpB9_6memchr7memrchrs_0E0Bb_",
		"<core::slice::Iter<u8> as core::iter::iterator::Iterator>::rposition::<core::slice::memchr::memrchr::{closure#1}>::{closure#0}"},
	{"_RINbNbCskIICzLVDPPb_5alloc5alloc8box_freeDINbNiB4_5boxed5FnBoxuEp6OutputuEL_ECs1iopQbuBiw2_3std", "alloc::alloc::box_free::<dyn alloc::boxed::FnBox<(), Output = ()>>"},
	{"_RNvMC0INtC8arrayvec8ArrayVechKj7b_E3new", "<arrayvec::ArrayVec<u8, 123>>::new"},
	{"_RMCs4fqI2P2rA04_13const_genericINtB0_8UnsignedKhb_E", "<const_generic::Unsigned<11>>"},
	{"_RMCs4fqI2P2rA04_13const_genericINtB0_6SignedKs98_E", "<const_generic::Signed<152>>"},
	{"_RMCs4fqI2P2rA04_13const_genericINtB0_6SignedKanb_E", "<const_generic::Signed<-11>>"},
	{"_RMCs4fqI2P2rA04_13const_genericINtB0_4BoolKb0_E", "<const_generic::Bool<false>>"},
	{"_RMCs4fqI2P2rA04_13const_genericINtB0_4BoolKb1_E", "<const_generic::Bool<true>>"},
	{"_RMCs4fqI2P2rA04_13const_genericINtB0_4CharKc76_E", "<const_generic::Char<'v'>>"},
	{"_RMCs4fqI2P2rA04_13const_genericINtB0_4CharKca_E", `<const_generic::Char<'\n'>>`},
	{"_RMCs4fqI2P2rA04_13const_genericINtB0_4CharKc2202_E", `<const_generic::Char<'\u{2202}'>>`},
	{"_RNvNvMCs4fqI2P2rA04_13const_genericINtB4_3FooKpE3foo3FOO", "<const_generic::Foo<_>>::foo::FOO"},
	{"_RNvMs0_NtCs5l0EXMQXRMU_21rustc_data_structures17obligation_forestINtB5_16ObligationForestNtNtNtCsdozMG8X9FIu_21rustc_trait_selection6traits7fulfill26PendingPredicateObligationE22register_obligation_atB1v_.llvm.8517020237817239694",
		"<rustc_data_structures::obligation_forest::ObligationForest<rustc_trait_selection::traits::fulfill::PendingPredicateObligation>>::register_obligation_at"},
	{"_ZN4core3ptr85drop_in_place$LT$std..rt..lang_start$LT$$LP$$RP$$GT$..$u7b$$u7b$closure$u7d$$u7d$$GT$17h27f14859c664490dE.llvm.8091179795805947855",
		"core::ptr::drop_in_place<std::rt::lang_start<()>::{{closure}}>"},
	{"_ZN9backtrace3foo17hbb467fcdaea5d79bE.llvm.A5310EB9", "backtrace::foo"},
	{"_ZN9backtrace3foo17hbb467fcdaea5d79bE.llvm.A5310EB9@@16", "backtrace::foo"},
	{"_RC3foo.llvm.9D1C9369", "foo"},
	{"_RC3foo.llvm.9D1C9369@@16", "foo"},
	{"_RNvC9backtrace3foo.llvm.A5310EB9", "backtrace::foo"},
}

// notRust are libiberty's cases of names that are not Rust ones (a hash of
// the wrong length or with a non-hex digit: C++ demangles them).
var notRust = []string{
	"_ZN4main4main18h1e714a2e23ed7db23E",
	"_ZN4main4main16h714a2e23ed7db23E",
	"_ZN4main4main17he714a2e23ed7db2gE",
}

func TestLibibertyVectors(t *testing.T) {
	for _, c := range libibertyVectors {
		if got, ok := Demangle(c.in, Options{}); !ok || got != c.want {
			t.Errorf("Demangle(%s) = %q, %v; want %q", c.in, got, ok, c.want)
		}
	}
	for _, s := range notRust {
		if got, ok := Demangle(s, Options{}); ok {
			t.Errorf("Demangle(%s) = %q: not a Rust name", s, got)
		}
	}
}

// TestLeadingUnderscores: the pinned C++ demangler read a legacy Rust
// identifier's leading "_" as v0's length separator and printed
// _rust_end_short_backtrace; gdb and c++filt print the name as it is.
func TestLeadingUnderscores(t *testing.T) {
	for in, want := range map[string]string{
		"_ZN3std10sys_common9backtrace28__rust_end_short_backtrace17h2b2c2c6d7d1e0f3aE": "",
		"_ZN3std10sys_common9backtrace26__rust_end_short_backtrace17hc8542ca3b5dac53aE": "std::sys_common::backtrace::__rust_end_short_backtrace",
		"_ZN11panic_abort18__rust_start_panic5abort17h42aaf1c838f2ed10E":                "panic_abort::__rust_start_panic::abort",
		"_ZN3foo5__bar17h0123456789abcdefE":                                             "foo::__bar",
		"_RNvCs1234_3foo5___bar":                                                        "foo::__bar",
		"_RNvCs1234_3foo5_0_bar":                                                        "foo::0_bar",
	} {
		got, ok := Demangle(in, Options{})
		if want == "" {
			// 28 is not the identifier's length: not a Rust name.
			if ok {
				t.Errorf("Demangle(%s) = %q, want no Rust name", in, got)
			}
			continue
		}
		if !ok || got != want {
			t.Errorf("Demangle(%s) = %q, %v; want %q", in, got, ok, want)
		}
	}
}
