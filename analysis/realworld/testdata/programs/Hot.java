import java.lang.reflect.Field;

// Hot warms the JIT (a hot loop), then, as the first argument says:
// "unsafe" stores through NULL from the VM's Unsafe_PutLong (storeFromVM
// runs in the interpreter when it is excluded from compilation:
// -XX:CompileCommand=exclude,Hot::storeFromVM),
// "jit" stores through NULL from JIT-compiled code (Unsafe.putLong is an
// intrinsic there), anything else spins until a signal ends it.
public class Hot {
    static long spin(long n) {
        long acc = 0;
        for (long i = 0; i < n; i++) {
            acc += (i * 31) ^ (acc >>> 3);
        }
        return acc;
    }

    static void poke(sun.misc.Unsafe u, long addr, long v) {
        u.putLong(addr, v);
    }

    static void storeFromVM(sun.misc.Unsafe u) {
        u.putAddress(0, 42);
    }

    public static void main(String[] args) throws Exception {
        Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
        f.setAccessible(true);
        sun.misc.Unsafe u = (sun.misc.Unsafe) f.get(null);
        long buf = u.allocateMemory(8);
        long total = 0;
        for (int r = 0; r < 200; r++) {
            total += spin(200_000);
        }
        for (int r = 0; r < 2_000_000; r++) {
            poke(u, buf, r);
        }
        System.out.println("warm " + total);
        System.out.flush();
        String what = args.length > 0 ? args[0] : "";
        if (what.equals("unsafe")) {
            storeFromVM(u);
        } else if (what.equals("jit")) {
            poke(u, 0, 42);
        }
        while (true) {
            total += spin(1_000_000_000L);
        }
    }
}
