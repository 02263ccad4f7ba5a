//! Runtime choice of the instruction set a decoder uses.

/// The instruction-set level a SIMD codec decodes with.
///
/// [`Isa::detect`] picks the best level the running CPU supports; tests force [`Isa::Scalar`] to
/// compare the SIMD paths against the scalar oracle. Asking for a level the CPU lacks silently
/// degrades to the best level it has, so an `Isa` value can never cause an illegal instruction.
///
/// The levels are ordered: each includes the ones below it, so code choosing a path compares
/// with `>=` (`isa >= Isa::Avx2` is true on an [`Isa::Avx512`] CPU too).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Isa {
    /// Portable code only.
    Scalar,
    /// x86-64 with SSSE3 and SSE4.1 (128-bit shuffles).
    Sse41,
    /// x86-64 with AVX2 (256-bit integer vectors).
    Avx2,
    /// x86-64 with AVX2, the AVX-512 subsets F, BW, VBMI and VPOPCNTDQ (512-bit vectors,
    /// byte permutations across a whole register, masks; Ice Lake, Sapphire Rapids, Zen 4
    /// and later) and `popcnt` (for counting a mask's lanes).
    Avx512,
}

impl Isa {
    /// The best level the running CPU supports, capped by the `APCACHE_SIMD` environment
    /// variable when it names a level (`scalar`, `sse4.1`, `avx2`, `avx512`): a way to compare
    /// the levels in one process's workload, or to keep the 512-bit paths off on a CPU whose
    /// clock drops under them. Read once per process.
    pub fn detect() -> Isa {
        static LEVEL: std::sync::OnceLock<Isa> = std::sync::OnceLock::new();
        *LEVEL.get_or_init(|| {
            let cpu = Isa::of_cpu();
            std::env::var("APCACHE_SIMD")
                .ok()
                .and_then(|name| Isa::ALL.into_iter().find(|isa| isa.name() == name))
                .map_or(cpu, |cap| cap.min(cpu))
        })
    }

    /// The best level the running CPU supports.
    fn of_cpu() -> Isa {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            if has!("avx2") {
                // `is_x86_feature_detected!` also checks that the OS saves the 512-bit state.
                if has!("avx512f")
                    && has!("avx512bw")
                    && has!("avx512vbmi")
                    && has!("avx512vpopcntdq")
                    && has!("popcnt")
                {
                    return Isa::Avx512;
                }
                return Isa::Avx2;
            }
            if has!("ssse3") && has!("sse4.1") {
                return Isa::Sse41;
            }
        }
        Isa::Scalar
    }

    /// `self`, lowered to what the running CPU supports.
    pub fn supported(self) -> Isa {
        self.min(Isa::detect())
    }

    /// Every level the running CPU supports, lowest first (for tests and benchmarks).
    pub fn all_supported() -> Vec<Isa> {
        let best = Isa::detect();
        Isa::ALL.into_iter().filter(|isa| *isa <= best).collect()
    }

    /// Every level, lowest first, whether this CPU has it or not.
    pub const ALL: [Isa; 4] = [Isa::Scalar, Isa::Sse41, Isa::Avx2, Isa::Avx512];

    /// A short lowercase name.
    pub fn name(self) -> &'static str {
        match self {
            Isa::Scalar => "scalar",
            Isa::Sse41 => "sse4.1",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_degrade_to_what_the_cpu_has() {
        let best = Isa::detect();
        assert_eq!(Isa::all_supported().last(), Some(&best));
        for isa in Isa::ALL {
            assert_eq!(isa.supported(), isa.min(best));
            assert!(isa.supported() <= best);
        }
        #[cfg(target_arch = "x86_64")]
        if best == Isa::Avx512 {
            assert!(std::arch::is_x86_feature_detected!("avx512vbmi"));
            assert!(std::arch::is_x86_feature_detected!("avx512vpopcntdq"));
        }
    }
}
