import { lazy } from "../lazy";

/**
 * The strength rule for new passwords (setup, user creation, password change, `reset-password`):
 * zxcvbn's estimate (@zxcvbn-ts/core with the @zxcvbn-ts/language-common dictionaries: ~30,000
 * leaked passwords, the EFF diceware word list, keyboard layouts; the username and display name
 * count as known words) must reach score 2, i.e. at least 10^6 guesses. That refuses the common
 * and the guessable ("12345678", "password", "P@ssw0rd", "letmein123", "summer2024", keyboard rows,
 * repeats, the username with a digit) while online guessing, which the login throttle limits to
 * about one guess a minute per username, would need years. Score 3 (10^8) was not chosen: it
 * refuses every 8-character password (zxcvbn rates 8 random characters at 10^8 guesses, score 2),
 * which would make the contract's 8-character minimum a 9-character one; against a stolen copy of
 * the database the defence is argon2id's cost, not this rule.
 */
export const MIN_SCORE = 2;

/**
 * Only the first 64 characters are estimated: the estimate's cost grows steeply with length (a
 * crafted 256-character password took 100-500 ms of the event loop; 64 stay in the tens of
 * milliseconds), and the whole is never easier to guess than its first 64 characters, so cutting
 * only errs on the side of refusing.
 */
export const CHECKED_LENGTH = 64;

// Loaded on the first check, not at start-up: the dictionaries and matchers take ~20 MiB of
// resident memory that a server which never changes a password does not need.
const estimator = lazy(async () => {
  const [{ ZxcvbnFactory }, common] = await Promise.all([import("@zxcvbn-ts/core"), import("@zxcvbn-ts/language-common")]);
  return new ZxcvbnFactory({
    dictionary: common.dictionary,
    graphs: common.adjacencyGraphs,
    maxLength: CHECKED_LENGTH,
    // The l33t matcher tries combinations of substitutions; the default cap (100) let a 64-character
    // run of substitutable characters ("1qaz2wsx…", "aB3$aB3$…") take 100-250 ms on a loaded 2-core
    // machine, 16 took 4-100 ms with the same scores for every password tried.
    l33tMaxSubstitutions: 16,
  });
});

// zxcvbn's warnings are keys (its own translations are another package); these say the same in a sentence.
const WARNINGS: Record<string, string> = {
  straightRow: "it is a straight row of keys on the keyboard",
  keyPattern: "it is a short keyboard pattern",
  simpleRepeat: 'it repeats one character, like "aaa"',
  extendedRepeat: 'it repeats a group of characters, like "abcabcabc"',
  sequences: 'it is a sequence, like "abc" or "6543"',
  recentYears: "it is built on a recent year",
  dates: "it is built on a date",
  topTen: "it is one of the ten most used passwords",
  topHundred: "it is one of the hundred most used passwords",
  common: "it is a commonly used password",
  similarToCommon: "it is a small change to a commonly used password",
  wordByItself: "a single word is easy to guess",
  namesByThemselves: "names on their own are easy to guess",
  commonNames: "common names are easy to guess",
  userInputs: "it is built on the username or the display name",
  pwned: "it appeared in a data breach",
};

/**
 * Why `password` is refused, or null when it is strong enough. `userInputs`: the words an attacker
 * knows about the account (username, display name).
 */
export async function passwordWeakness(password: string, userInputs: string[]): Promise<string | null> {
  const zxcvbn = await estimator();
  const result = zxcvbn.check(password, userInputs.filter((s) => s.length > 0));
  if (result.score >= MIN_SCORE) return null;
  const why = (result.feedback.warning && WARNINGS[result.feedback.warning]) || "it would be found within the first million guesses";
  return `too easy to guess: ${why}; use a longer phrase of a few unrelated words`;
}
