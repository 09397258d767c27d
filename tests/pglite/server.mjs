// A real PostgreSQL (PGlite 0.5, PostgreSQL 17 in WebAssembly) with pgvector,
// served on 127.0.0.1:PORT for tests/test-import-immich.c. It speaks no SSL:
// clients connect with sslmode=disable. Stops on SIGTERM or when stdin closes.
// maxConnections 4: with 1, a connection opened right after the previous one
// closed was dropped ("server closed the connection unexpectedly") before the
// server had let go of the old one; queries are still queued one at a time.
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
const port = Number(process.argv[2] || 0);
const db = await PGlite.create({ extensions: { vector } });
const server = new PGLiteSocketServer({ db, port, host: '127.0.0.1', maxConnections: 4 });
await server.start();
console.log(server.getServerConn());
const stop = async () => { await server.stop(); await db.close(); process.exit(0); };
process.on('SIGTERM', stop); process.on('SIGINT', stop);
process.stdin.on('end', stop); process.stdin.resume();
