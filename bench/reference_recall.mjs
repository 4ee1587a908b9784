// The TypeScript reference's in-process recall, for bench/path_topic.py: seed its 10k corpus through its public
// API (as the corpus's FORMAT.md says its own benchmark does), or time recall() on a seeded store.
//
//   node bench/reference_recall.mjs seed  --ref /work/ref --db FILE --corpus notes-10000.json --root DIR
//   node bench/reference_recall.mjs time  --ref /work/ref --db FILE --topic "src/db/pool.ts timeout" --calls 30
//   node bench/reference_recall.mjs time  --ref /work/ref --db FILE --topics '["a", "b"]' --calls 30
//
// `time` prints JSON: the CPU (user + system, process.cpuUsage) of each call after 5 warm-up calls, and the
// first call's answer (to check the store answers as expected); with `--topics`, one such object per topic, keyed
// by it. Nothing of the reference is copied here: it is imported from its build (`dist/index.js`).
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

const args = Object.fromEntries(
  process.argv.slice(3).reduce((acc, v, i, all) => (i % 2 === 0 ? [...acc, [v.replace(/^--/, ''), all[i + 1]]] : acc), []),
);
const ref = await import(pathToFileURL(join(args.ref, 'dist', 'index.js')).href);
const db = ref.openDatabase(args.db);

if (process.argv[2] === 'seed') {
  const root = args.root;
  ref.ensureCortexSchema(db, root);
  const store = new ref.CortexStore(db);
  const scopeKey = ref.deriveBranchScopeKey(root, root, 'main');
  const notes = JSON.parse(readFileSync(args.corpus, 'utf8')).notes;
  const sessions = new Map();
  for (const note of notes) {
    if (!sessions.has(note.session)) sessions.set(note.session, []);
    sessions.get(note.session).push(note);
  }
  for (const [, batch] of [...sessions.entries()].sort((a, b) => a[0] - b[0])) {
    const session = store.createSession({
      gitRoot: root, worktreePath: root, branchRef: 'main', scopeType: 'branch', scopeKey,
    });
    db.transaction(() => {
      for (const note of batch) {
        store.insertNote({
          sessionId: session.id, kind: note.kind, content: note.content,
          ...(note.subject ? { subject: note.subject } : {}),
          ...(note.alternatives ? { alternatives: note.alternatives } : {}),
        });
      }
    })();
    ref.syncBranchSnapshotForSession(store, session.id);
    store.endSession(session.id);
  }
  // The last session stays the current one, so recall reads the branch scope as after a real session.
  const last = store.createSession({ gitRoot: root, worktreePath: root, branchRef: 'main', scopeType: 'branch', scopeKey });
  console.log(JSON.stringify({ notes: notes.length, session: last.id }));
} else {
  const store = new ref.CortexStore(db);
  const calls = Number(args.calls ?? 30);
  // `--topics` (a JSON list) times each topic in turn in this one process, as `--topic` times one.
  const topics = args.topics ? JSON.parse(args.topics) : [args.topic];
  const out = {};
  for (const topic of topics) {
    const first = ref.recall(store, topic);
    for (let i = 0; i < 4; i++) ref.recall(store, topic);
    const cpu = [];
    for (let i = 0; i < calls; i++) {
      const t = process.cpuUsage();
      ref.recall(store, topic);
      const d = process.cpuUsage(t);
      cpu.push((d.user + d.system) / 1000);
    }
    out[topic] = { cpu_ms: cpu, answer: first };
  }
  console.log(JSON.stringify(args.topics ? out : out[args.topic]));
}
