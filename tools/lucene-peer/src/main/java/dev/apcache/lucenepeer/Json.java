package dev.apcache.lucenepeer;

/** The little JSON that lucene-peer writes: string literals with the escapes JSON requires. */
final class Json {
  private Json() {}

  /**
   * Returns {@code f} as a JSON number that reads back as the same float ({@link
   * Float#toString}, e.g. {@code 1.2345678} or {@code 1.0E-5}), or {@code null} when it is not
   * finite (a score Lucene did not compute is NaN).
   */
  static String number(float f) {
    return Float.isFinite(f) ? Float.toString(f) : "null";
  }

  /** Returns {@code s} as a quoted JSON string; non-ASCII characters are left as they are. */
  static String string(String s) {
    StringBuilder b = new StringBuilder(s.length() + 2).append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        default -> {
          if (c < 0x20) {
            b.append(String.format("\\u%04x", (int) c));
          } else {
            b.append(c);
          }
        }
      }
    }
    return b.append('"').toString();
  }
}
