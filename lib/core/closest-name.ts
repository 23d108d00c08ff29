/**
 * "Did you mean …?" for a misspelt name: the closest of a list of known names by edit distance,
 * shared by the field hints of validation (field-hints.ts) and the parameter reference
 * warnings (param-references.ts). Pure.
 */

/** Lower-case, without `_` and `-`: `timeout_seconds`, `TimeoutSeconds` and `timeoutSeconds` compare equal. */
function normalize(name: string): string {
  return name.toLowerCase().replace(/[_-]/g, "");
}

/**
 * Edit distance with adjacent transpositions (optimal string alignment): `retires` is one edit
 * from `retries`, `upstreams` one from `upstream`, `retrys` two from `retries`.
 */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    const row: number[] = [i];
    for (let j = 1; j <= b.length; j++) {
      if (i === 0) {
        row.push(j);
        continue;
      }
      const prev = rows[i - 1] as number[];
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(
        (prev[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (prev[j - 1] as number) + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d = Math.min(d, ((rows[i - 2] as number[])[j - 2] as number) + 1);
      }
      row.push(d);
    }
    rows.push(row);
  }
  return (rows[a.length] as number[])[b.length] as number;
}

/**
 * The known name `word` most likely stands for, or undefined when none is close: equal but for
 * case, `_` and `-`; else at most 1 edit away for names of up to 5 characters and 2 for longer
 * ones (shorter names are too easily one edit from an unrelated word). Ties go to the first
 * candidate. `word` itself is never suggested.
 */
export function closestName(word: string, candidates: Iterable<string>): string | undefined {
  const target = normalize(word);
  const limit = target.length <= 3 ? 0 : target.length <= 5 ? 1 : 2;
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    if (candidate === word) continue;
    const d = editDistance(target, normalize(candidate));
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best !== undefined && bestDistance <= limit ? best : undefined;
}
