/**
 * Wildcard complexity: the measure behind EventBridge's "Rule is too complex - try using fewer
 * wildcard characters or fewer repeating character sequences after a wildcard character" (the
 * reason PutRule gives with InvalidEventPatternException).
 *
 * Sources. The User Guide, "Comparison operators for use in event patterns in Amazon
 * EventBridge", section "Wildcards and event pattern complexity"
 * (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-create-pattern-operators.html#eb-filtering-wildcard-matching-complexity),
 * says a rule that is too complex is refused but gives neither the measure nor the limit. The
 * measure is aws/event-ruler's, the matcher EventBridge runs: its README ("Matching with a
 * Machine": limit "repeating character sequences that occur following a wildcard character"; a
 * per-rule `validate()` that adds the rule's wildcard alternatives to one Machine and refuses it
 * "Rule is too complex" above a maximum) and src/main/software/amazon/event/ruler/
 * MachineComplexityEvaluator.java, which defines a machine's complexity as the most wildcard
 * rule prefixes one worst-case input value can be matching at once.
 *
 * How event-ruler counts (ByteMachine.java). Per field, every value becomes a byte automaton over
 * its JSON text, quotes included: a trie shared by all values up to each one's first `*`, then,
 * for each `*`, a state entered on any byte that loops on any byte and may be skipped. The
 * evaluator walks every set of states one input can reach (the subset construction) and, for
 * each set, adds up the wildcard patterns reachable from each state in it, plus those of the
 * wildcard state each one leads to on any byte when the set lacks it; the largest sum is the
 * complexity. Fields are judged one by one (a machine per field).
 *
 * What differs here, only ever raising the count, so the count is never below event-ruler's
 * (checked against event-ruler 2.0.1 in test/unit/event-pattern-complexity.test.ts): after a
 * value's first `*` its states are its own, where event-ruler shares some (a value added twice,
 * punctuation after a `*`); and one field's values from every `$or` alternative are counted as
 * one machine, where event-ruler may put alternatives that differ in an earlier field into
 * separate machines.
 */
import { leaves, type PatternNode, type WildcardValue } from "./event-pattern-match.js";

/**
 * Highest wildcard complexity accepted on one field. AWS does not publish its limit. The
 * event-ruler README's per-rule example caps each rule at 10. EventBridge has been seen to accept
 * 9 (three `*:stack/NAME/*` values on one field) and refuse 12 (four of them; vals-ai/Valkyrie
 * pull request 278), and to accept 8 and refuse 16 (two, then four `.../datasync/*.EXT` values, a
 * Terraform module quoting PutRule's answer). Shoal refuses anything above 9, the highest value
 * EventBridge is known to accept: a pattern EventBridge might take at 10 is refused here rather
 * than one it refuses being accepted.
 */
export const EVENT_PATTERN_MAX_WILDCARD_COMPLEXITY = 9;

/**
 * Automaton states one field may build before it is judged too complex without counting, and
 * state sets the count may visit: bounds on the work, far above what a 2,048-character pattern
 * within the complexity limit needs.
 */
const MAX_STATES = 20_000;
const MAX_SETS = 20_000;

/**
 * The wildcard values of each field over all alternatives: a value once per alternative holding
 * it, as event-ruler adds each `$or` alternative to the machine as a rule of its own.
 */
export function wildcardFields(alternatives: PatternNode[]): Map<string, WildcardValue[]> {
  const fields = new Map<string, WildcardValue[]>();
  for (const root of alternatives) {
    for (const { name, leaf } of leaves(root)) {
      for (const m of leaf) {
        if (!("wildcard" in m) || !m.wildcard) continue;
        const list = fields.get(name) ?? [];
        list.push(m.wildcard);
        fields.set(name, list);
      }
    }
  }
  return fields;
}

const STAR = -1;
const QUOTE = 0x22;
/** Stands for every byte no transition names. */
const OTHER = -2;

interface State {
  id: number;
  /** Patterns reachable from here. */
  keys: Set<string>;
  /** Transitions on one byte. */
  edges: Map<number, State[]>;
  /** The transition on any byte: the wildcard state after this one (itself, for a wildcard state). */
  any?: State;
  /** Trie children before the first `*`, shared by every pattern with that prefix. */
  trie?: Map<number, State>;
  /** The wildcard state after this trie state, shared likewise. */
  star?: State;
  /** The final transition (closing quote) per pattern, reused when the pattern is added again. */
  ends?: Map<string, State>;
}

/**
 * The wildcard complexity of one field holding `values` (every wildcard and anything-but
 * wildcard value of the field, a value repeated once per time it is added), counted up to `cap`:
 * returns `cap` as soon as the count reaches it, or when the field's automaton or the walk over
 * it would exceed this module's work bounds.
 */
export function wildcardComplexity(values: WildcardValue[], cap: number): number {
  const states: State[] = [];
  const make = (): State => {
    const s: State = { id: states.length, keys: new Set(), edges: new Map() };
    states.push(s);
    return s;
  };
  const root = make();
  for (const value of values) {
    for (const glob of value.globs) {
      addGlob(root, tokens(glob), value.key, make);
      if (states.length > MAX_STATES) return cap;
    }
  }
  return walk(root, cap);
}

/** `"` + the UTF-8 bytes of the runs with STAR between them + `"`, as event-ruler reads a wildcard. */
function tokens(glob: string[]): number[] {
  const out = [QUOTE];
  const encoder = new TextEncoder();
  glob.forEach((run, i) => {
    if (i > 0) out.push(STAR);
    for (const b of encoder.encode(run)) out.push(b);
  });
  out.push(QUOTE);
  return out;
}

function addEdge(from: State, byte: number, to: State): void {
  const list = from.edges.get(byte);
  if (list) list.push(to);
  else from.edges.set(byte, [to]);
}

/**
 * Adds one string of a pattern: trie states up to the first `*` (shared), then states of its
 * own. A `*` is a state entered on any byte that loops on any byte; the byte after it is also
 * reachable from the state before it, so the `*` may match nothing (event-ruler's
 * addTransitionNextStateForWildcard and addTransitionNextState).
 */
function addGlob(root: State, toks: number[], key: string, make: () => State): void {
  let cur = root;
  let before: State | undefined;
  let shared = true;
  toks.forEach((tok, i) => {
    const afterStar = toks[i - 1] === STAR;
    let next: State | undefined;
    if (i === toks.length - 1) {
      next = cur.ends?.get(key);
      if (!next) {
        next = make();
        cur.ends ??= new Map();
        cur.ends.set(key, next);
        addEdge(cur, tok, next);
        if (afterStar && before) addEdge(before, tok, next);
      }
    } else if (tok === STAR) {
      next = shared ? cur.star : undefined;
      if (!next) {
        next = make();
        if (shared) cur.star = next;
      }
      cur.any = next;
      next.any = next;
      shared = false;
    } else if (shared) {
      next = cur.trie?.get(tok);
      if (!next) {
        next = make();
        cur.trie ??= new Map();
        cur.trie.set(tok, next);
        addEdge(cur, tok, next);
      }
    } else {
      next = make();
      addEdge(cur, tok, next);
      if (afterStar && before) addEdge(before, tok, next);
    }
    next.keys.add(key);
    before = cur;
    cur = next;
  });
}

/**
 * MachineComplexityEvaluator.evaluate over the subset construction, breadth first: from each
 * set, one step on every byte a transition of the set names and one on any other byte.
 */
function walk(root: State, cap: number): number {
  const pending: State[][] = [[root]];
  const seen = new Set<string>();
  let max = 0;
  for (let i = 0; i < pending.length; i++) {
    const set = pending[i] as State[];
    const bytes = new Set<number>(i === 0 ? [] : [OTHER]);
    for (const s of set) for (const b of s.edges.keys()) bytes.add(b);
    for (const b of bytes) {
      const next = step(set, b);
      const key = next.map((s) => s.id).join(",");
      if (next.length === 0 || seen.has(key)) continue;
      seen.add(key);
      pending.push(next);
      max = Math.max(max, weigh(next));
      if (max >= cap || seen.size > MAX_SETS) return cap;
    }
  }
  return max;
}

/** The states reached from `set` on byte `b` (OTHER: a byte no transition names), sorted by id. */
function step(set: State[], b: number): State[] {
  const out = new Map<number, State>();
  for (const s of set) {
    if (s.any) out.set(s.any.id, s.any);
    if (b !== OTHER) for (const t of s.edges.get(b) ?? []) out.set(t.id, t);
  }
  return [...out.values()].sort((x, y) => x.id - y.id);
}

/**
 * The patterns reachable from each state of the set, plus, for a state whose any-byte
 * transition leads to a wildcard state outside the set, that state's: an input matching `foo`
 * also matches `foo*` (MachineComplexityEvaluator's "transitions for all bytes").
 */
function weigh(set: State[]): number {
  const ids = new Set(set.map((s) => s.id));
  let sum = 0;
  for (const s of set) {
    sum += s.keys.size;
    if (s.any && !ids.has(s.any.id)) sum += s.any.keys.size;
  }
  return sum;
}
