/**
 * Which task instance (attempt) stands for a task's current state. An instance that was rerun or
 * recovered keeps the attempts of its earlier rounds (readable as the task's attempts), but its
 * current state is its progress: a task the current round has not reached is "not started", never
 * an attempt of an earlier round (DolphinScheduler shows a rerun instance's task list afresh too).
 */
import { attemptOf, type Progress, SLOT } from "./progress.js";

/**
 * The attempt numbers that may hold task `index`'s current state, best first; empty when the
 * task has not started in the current round (waiting) or is not part of the run (out of scope).
 *
 * The dispatcher writes a task instance before it records the decision in the progress (effects
 * before commit), so an attempt the progress names exists. One exception: a worker task that a
 * pause stopped already counts the attempt a resume will start, so its current state is the
 * attempt before that one (the PAUSED, or failed-under-pause, attempt).
 */
export function currentAttemptCandidates(progress: Progress, index: number): number[] {
  const slot = progress.slots[index];
  if (slot === undefined || slot === SLOT.OUT || slot === SLOT.WAITING) return [];
  const attempt = attemptOf(progress, index);
  if (slot === SLOT.PAUSED && attempt > 1) return [attempt, attempt - 1];
  return [attempt];
}

/** The part of a task instance this module reads. */
export interface AttemptRef {
  code: string;
  attempt: number;
}

/**
 * The current task instance of every task that has one in the current round.
 * @param codes task codes by index (the definition's task order, which the progress follows).
 * @param attempts every attempt of the instance's tasks, in any order, of any round.
 * @returns one attempt per task that started in the current round, in `codes` order.
 */
export function currentAttempts<T extends AttemptRef>(
  progress: Progress,
  codes: readonly string[],
  attempts: readonly T[],
): T[] {
  const byKey = new Map<string, T>();
  for (const a of attempts) byKey.set(`${a.code}\u0000${a.attempt}`, a);
  const out: T[] = [];
  for (const [index, code] of codes.entries()) {
    for (const attempt of currentAttemptCandidates(progress, index)) {
      const found = byKey.get(`${code}\u0000${attempt}`);
      if (found) {
        out.push(found);
        break;
      }
    }
  }
  return out;
}
