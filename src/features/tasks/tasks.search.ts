/**
 * Search text normalisation, shared by writes (tasks.search_text, indexed by tasks_fts) and by
 * queries, so both sides fold the same way: compatibility forms (NFKC: full-width letters, ligatures),
 * diacritics removed (é → e), Unicode lower case. Done in JS because SQLite's lower() is ASCII-only.
 */
export function normalizeSearch(s: string): string {
  return s.normalize("NFKD").replace(/\p{M}+/gu, "").normalize("NFKC").toLowerCase();
}

/** What tasks.search_text holds. The newline cannot occur inside a search term (terms split on whitespace). */
export function taskSearchText(title: string, description: string): string {
  return normalizeSearch(`${title}\n${description}`);
}

/** At most this many terms in `q` (each is one more condition on every row walked); more is 422. */
export const MAX_TERMS = 32;

/** Whitespace-separated, normalised, de-duplicated terms of `q`. */
export function searchTerms(q: string): string[] {
  const out = new Set<string>();
  for (const raw of q.split(/\s+/u)) {
    const t = normalizeSearch(raw);
    if (t.length > 0) out.add(t);
  }
  return [...out];
}

/**
 * The trigram index answers substrings of three or more characters (code points). Not a term with
 * a NUL: FTS5 reads its query as a C string, so the NUL would end it ("unterminated string", a 500
 * until issue 11); such a term is a substring test on each row (instr compares the whole value).
 */
export function usesTrigramIndex(term: string): boolean {
  return [...term].length >= 3 && !term.includes("\0");
}

/** An FTS5 phrase: the term in double quotes, inner quotes doubled; no operator is interpreted. */
export function ftsPhrase(term: string): string {
  return `"${term.replaceAll('"', '""')}"`;
}
