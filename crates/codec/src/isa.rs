//! Runtime choice of the instruction set a decoder uses.

/// The instruction-set level a SIMD codec decodes with.
///
/// [`Isa::detect`] picks the best level the running CPU supports; tests force [`Isa::Scalar`] to
/// compare the SIMD paths against the scalar oracle. Asking for a level the CPU lacks silently
/// degrades to the best level it has, so an `Isa` value can never cause an illegal instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Isa {
    /// Portable code only.
    Scalar,
    /// x86-64 with SSSE3 and SSE4.1 (128-bit shuffles).
    Sse41,
    /// x86-64 with AVX2 (256-bit integer vectors).
    Avx2,
}

impl Isa {
    /// The best level the running CPU supports.
    pub fn detect() -> Isa {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                return Isa::Avx2;
            }
            if std::arch::is_x86_feature_detected!("ssse3")
                && std::arch::is_x86_feature_detected!("sse4.1")
            {
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
        [Isa::Scalar, Isa::Sse41, Isa::Avx2]
            .into_iter()
            .filter(|isa| *isa <= Isa::detect())
            .collect()
    }

    /// A short lowercase name.
    pub fn name(self) -> &'static str {
        match self {
            Isa::Scalar => "scalar",
            Isa::Sse41 => "sse4.1",
            Isa::Avx2 => "avx2",
        }
    }
}
