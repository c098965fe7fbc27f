/**
 * Lists `item` while `list` holds fewer than `max`; past that it is only counted. Returns how many
 * went uncounted in the list (0 or 1), to add to the list's `more…` count: a hostile file makes
 * millions of problems, and the first ones already say what is wrong.
 */
export function keepFirst<T>(list: T[], item: T, max: number): 0 | 1 {
  if (list.length >= max) return 1;
  list.push(item);
  return 0;
}
