// A CTE named `durability` that makes the statement's commit not wait for its WAL flush
// (synchronous_commit off for this one transaction), always or when the SQL condition
// `when` holds. A CTE that is not referenced does not run: the statement must read from
// `durability` (e.g. `FROM t, durability`). Sound only where a later commit that does
// wait comes before anything is acknowledged on the strength of this one: the WAL is
// flushed in order, so that flush covers this commit too (docs/agent.md; the execution
// insert in @drydock/sessions).
export function commitWithoutFlushCte(when?: string): string {
  const setting = when === undefined ? `'off'` : `CASE WHEN ${when} THEN 'off' ELSE 'on' END`;
  return `durability AS MATERIALIZED (SELECT set_config('synchronous_commit', ${setting}, true))`;
}
