//! Which UAX #29 segments are tokens, as Lucene's `StandardTokenizer` decides.
//!
//! Lucene emits a segment when it holds a letter, a digit, an ideograph or kana, or an emoji
//! (any `Extended_Pictographic` character: `♭`, `™`, `★` ...), and drops segments of
//! punctuation, symbols and "other numbers" (`²`, `½`, `₂`: General_Category `No`, which UAX #29
//! does not count as numeric). It also keeps a run of South-East Asian letters (Thai, Lao,
//! Myanmar, Khmer, Tai scripts: Line_Break `SA`) together as one token, where UAX #29 would cut
//! between every character.

/// Whether `c` is an "other number" (General_Category `No`) in the ranges that occur in text:
/// super- and subscripts, vulgar fractions, circled and parenthesised numbers.
fn is_other_number(c: char) -> bool {
    matches!(c,
        '\u{00B2}'..='\u{00B3}' | '\u{00B9}' | '\u{00BC}'..='\u{00BE}'
        | '\u{09F4}'..='\u{09F9}' | '\u{0B72}'..='\u{0B77}' | '\u{0BF0}'..='\u{0BF2}'
        | '\u{0C78}'..='\u{0C7E}' | '\u{0D58}'..='\u{0D5E}' | '\u{0D70}'..='\u{0D78}'
        | '\u{0F2A}'..='\u{0F33}' | '\u{1369}'..='\u{137C}' | '\u{17F0}'..='\u{17F9}'
        | '\u{19DA}' | '\u{2070}' | '\u{2074}'..='\u{2079}' | '\u{2080}'..='\u{2089}'
        | '\u{2150}'..='\u{215F}' | '\u{2189}' | '\u{2460}'..='\u{249B}'
        | '\u{24EA}'..='\u{24FF}' | '\u{2776}'..='\u{2793}' | '\u{2CFD}'
        | '\u{3192}'..='\u{3195}' | '\u{3220}'..='\u{3229}' | '\u{3248}'..='\u{324F}'
        | '\u{3251}'..='\u{325F}' | '\u{3280}'..='\u{3289}' | '\u{32B1}'..='\u{32BF}'
        | '\u{A830}'..='\u{A835}' | '\u{1F100}'..='\u{1F10C}')
}

/// Whether `c` is `Extended_Pictographic` (Unicode emoji data).
pub(super) fn is_pictographic(c: char) -> bool {
    matches!(c,
        '\u{00A9}' | '\u{00AE}' | '\u{203C}' | '\u{2049}' | '\u{2122}' | '\u{2139}'
        | '\u{2194}'..='\u{2199}' | '\u{21A9}'..='\u{21AA}' | '\u{231A}'..='\u{231B}'
        | '\u{2328}' | '\u{2388}' | '\u{23CF}' | '\u{23E9}'..='\u{23F3}'
        | '\u{23F8}'..='\u{23FA}' | '\u{24C2}' | '\u{25AA}'..='\u{25AB}' | '\u{25B6}'
        | '\u{25C0}' | '\u{25FB}'..='\u{25FE}' | '\u{2600}'..='\u{2605}'
        | '\u{2607}'..='\u{2612}' | '\u{2614}'..='\u{2685}' | '\u{2690}'..='\u{2705}'
        | '\u{2708}'..='\u{2712}' | '\u{2714}' | '\u{2716}' | '\u{271D}' | '\u{2721}'
        | '\u{2728}' | '\u{2733}'..='\u{2734}' | '\u{2744}' | '\u{2747}' | '\u{274C}'
        | '\u{274E}' | '\u{2753}'..='\u{2755}' | '\u{2757}' | '\u{2763}'..='\u{2767}'
        | '\u{2795}'..='\u{2797}' | '\u{27A1}' | '\u{27B0}' | '\u{27BF}'
        | '\u{2934}'..='\u{2935}' | '\u{2B05}'..='\u{2B07}' | '\u{2B1B}'..='\u{2B1C}'
        | '\u{2B50}' | '\u{2B55}' | '\u{3030}' | '\u{303D}' | '\u{3297}' | '\u{3299}'
        | '\u{1F000}'..='\u{1F0FF}' | '\u{1F10D}'..='\u{1F10F}' | '\u{1F12F}'
        | '\u{1F16C}'..='\u{1F171}' | '\u{1F17E}'..='\u{1F17F}' | '\u{1F18E}'
        | '\u{1F191}'..='\u{1F19A}' | '\u{1F1AD}'..='\u{1F1E5}' | '\u{1F201}'..='\u{1F20F}'
        | '\u{1F21A}' | '\u{1F22F}' | '\u{1F232}'..='\u{1F23A}' | '\u{1F23C}'..='\u{1F23F}'
        | '\u{1F249}'..='\u{1F3FA}' | '\u{1F400}'..='\u{1F53D}' | '\u{1F546}'..='\u{1F64F}'
        | '\u{1F680}'..='\u{1F6FF}' | '\u{1F774}'..='\u{1F77F}' | '\u{1F7D5}'..='\u{1F7FF}'
        | '\u{1F80C}'..='\u{1F80F}' | '\u{1F848}'..='\u{1F84F}' | '\u{1F85A}'..='\u{1F85F}'
        | '\u{1F888}'..='\u{1F88F}' | '\u{1F8AE}'..='\u{1F8FF}' | '\u{1F90C}'..='\u{1F93A}'
        | '\u{1F93C}'..='\u{1F945}' | '\u{1F947}'..='\u{1FAFF}' | '\u{1FC00}'..='\u{1FFFD}')
}

/// Whether `c` belongs to a South-East Asian script written without spaces (Line_Break `SA`).
pub(super) fn is_southeast_asian(c: char) -> bool {
    matches!(c,
        '\u{0E00}'..='\u{0EFF}' | '\u{1000}'..='\u{109F}' | '\u{1780}'..='\u{17FF}'
        | '\u{1950}'..='\u{19DF}' | '\u{1A20}'..='\u{1AAF}' | '\u{A9E0}'..='\u{A9FF}'
        | '\u{AA60}'..='\u{AADF}')
}

/// Whether a UAX #29 segment is a token.
pub(super) fn is_token(segment: &str) -> bool {
    segment
        .chars()
        .any(|c| (c.is_alphanumeric() && !is_other_number(c)) || is_pictographic(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes() {
        assert!(is_token("abc") && is_token("42") && is_token("東") && is_token("é"));
        assert!(is_token("♭") && is_token("™") && is_token("😀"));
        assert!(!is_token("²") && !is_token("½") && !is_token("₂") && !is_token("—"));
        assert!(is_token("x²"));
        assert!(is_southeast_asian('ก') && !is_southeast_asian('a'));
    }
}
