import { runMigrations } from '../migrations/index.js';

const url = process.env.DATABASE_URL;
if (!url) {
  console.error('DATABASE_URL is not set');
  process.exit(1);
}
const applied = await runMigrations(url);
console.log(applied.length ? `applied migrations: ${applied.join(', ')}` : 'database schema is up to date');
