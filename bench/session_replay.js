// SPDX-License-Identifier: MIT
//
// An agent-like session, replayed: typical tool commands run one after the
// other through child_process.spawn (pipes for stdin, stdout and stderr, the
// output collected), as an agent CLI's shell tool runs them. bench/run.sh
// (section 5, redirect) runs it natively, under `moat run -- node ...` (every
// command is redirected to the embedded runner) and with --bwrap (every
// command prefixed with a bwrap argv). It asserts no timing.
//
//   node session_replay.js --make-repo DIR
//       writes a small git repository (a few hundred files, some of them
//       changed and some untracked after the commit) into DIR, which must not
//       exist; the marker DIR/.git/moat-replay-ok says it is complete
//   node session_replay.js [--count N] [--round K --rounds R] [--python PY] [--bwrap]
//                          [--hashes FILE] [--label L]
//       from inside such a repository: N commands (default 300), drawn from a
//       fixed mix by a seeded generator (the same list every time), after one
//       untimed warm-up of each kind; with --rounds R, only those whose index is
//       K modulo R (a caller takes turns between methods, round by round).
//       Prints one line of key=value pairs: label, n, total_ms (first spawn to
//       last exit), mean_ms, p50_ms, p90_ms, p99_ms, nonzero (commands with an
//       exit status other than 0), errors (spawn failures) and hash (SHA-256
//       over every command's exit status, stdout and stderr). --hashes FILE: one
//       line per command, INDEX TAB HASH TAB MS TAB COMMAND, to merge rounds and
//       find the first command whose output differs.
//
// Commands are looked up on PATH by child_process (as an agent's would be);
// python3 is --python (default python3).
'use strict';

const { spawn, execFileSync } = require('child_process');
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');

const BWRAP = ['bwrap', '--unshare-pid', '--unshare-net', '--ro-bind', '/', '/', '--dev', '/dev',
	'--proc', '/proc'];

function parseArgs(argv) {
	const o = { count: 300, python: 'python3', bwrap: false, hashes: null, label: 'replay',
		makeRepo: null, round: 0, rounds: 1 };
	for (let i = 0; i < argv.length; i++) {
		const a = argv[i];
		const next = () => {
			if (i + 1 >= argv.length)
				throw new Error(`${a} needs a value`);
			return argv[++i];
		};
		if (a === '--count') o.count = parseInt(next(), 10);
		else if (a === '--python') o.python = next();
		else if (a === '--bwrap') o.bwrap = true;
		else if (a === '--hashes') o.hashes = next();
		else if (a === '--label') o.label = next();
		else if (a === '--make-repo') o.makeRepo = next();
		else if (a === '--round') o.round = parseInt(next(), 10);
		else if (a === '--rounds') o.rounds = parseInt(next(), 10);
		else throw new Error(`unknown argument ${a}`);
	}
	if (!(o.count >= 1))
		throw new Error('--count must be at least 1');
	if (!(o.rounds >= 1 && o.round >= 0 && o.round < o.rounds))
		throw new Error('--round must be in 0..R-1 for --rounds R');
	return o;
}

// A small deterministic generator (LCG, Numerical Recipes constants).
function rng(seed) {
	let s = seed >>> 0;
	return (n) => {
		s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
		return s % n;
	};
}

// ---- the repository ----

const MODS = 8, C_PER_MOD = 25, HEADERS = 40, SCRIPTS = 30, DOCS = 30;

function cFile(m, f) {
	const lines = [`/* module ${m}, file ${f} */`, `#include "mod${m}.h"`, '#include <stdio.h>', ''];
	for (let k = 0; k < 6; k++) {
		lines.push(`struct item_${m}_${f}_${k} {`, '\tint id;', '\tconst char *name;', '};', '');
		lines.push(`int`, `handle_${m}_${f}_${k}(struct item_${m}_${f}_${k} *it)`, '{');
		if ((m + f + k) % 7 === 0)
			lines.push('\t/* TODO: validate the name */');
		if ((m * f + k) % 11 === 0)
			lines.push('\t/* FIXME: overflow when id is negative */');
		lines.push(`\tprintf("%d %s\\n", it->id, it->name);`, `\treturn it->id + ${k};`, '}', '');
	}
	return lines.join('\n');
}

function makeRepo(dir) {
	if (fs.existsSync(dir))
		throw new Error(`${dir} exists`);
	fs.mkdirSync(dir, { recursive: true });
	const w = (rel, text) => {
		fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
		fs.writeFileSync(path.join(dir, rel), text);
	};
	for (let m = 0; m < MODS; m++)
		for (let f = 0; f < C_PER_MOD; f++)
			w(`src/mod${m}/file${f}.c`, cFile(m, f));
	for (let h = 0; h < HEADERS; h++)
		w(`include/mod${h % MODS}_${h}.h`,
			`#pragma once\n/* header ${h} */\nint handle_${h}(void);\n#define LIMIT_${h} ${h * 17}\n`);
	for (let s = 0; s < SCRIPTS; s++)
		w(`scripts/tool${s}.py`, `"""tool ${s}"""\nimport sys\n\n\ndef helper_${s}(x):\n` +
			`    # TODO: tool ${s} should check x\n    return x * ${s}\n\n\n` +
			`if __name__ == "__main__":\n    print(helper_${s}(len(sys.argv)))\n`);
	for (let d = 0; d < DOCS; d++)
		w(`docs/page${d}.md`, `# Page ${d}\n\n` +
			Array.from({ length: 30 }, (_, k) => `Line ${k} of page ${d}: handle_${d % MODS}_${k}.`)
				.join('\n') + '\n');
	w('README.md', '# replay repository\n\nGenerated by bench/session_replay.js.\n');
	w('Makefile', 'all:\n\tcc -Iinclude -c src/*/*.c\n');
	const git = (...args) => execFileSync('git', args, { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
	git('init', '-q');
	git('add', '-A');
	git('-c', 'user.name=moat-bench', '-c', 'user.email=bench@localhost', 'commit', '-q', '-m',
		'replay repository');
	// An agent's session is mid-change: a few files modified, a few new.
	for (let m = 0; m < 3; m++)
		fs.appendFileSync(path.join(dir, `src/mod${m}/file${m}.c`), `/* edited ${m} */\n`);
	for (let n = 0; n < 3; n++)
		w(`src/mod${n}/new${n}.c`, `/* new file ${n} */\nint added_${n}(void) { return ${n}; }\n`);
	git('status', '--porcelain'); // the index's stat data, fresh
	fs.writeFileSync(path.join(dir, '.git', 'moat-replay-ok'), '');
}

// ---- the commands ----

// Files and directories of the repository (not .git), sorted: the same list every time.
function listRepo() {
	const files = [], dirs = [];
	const walk = (rel) => {
		for (const e of fs.readdirSync(rel || '.', { withFileTypes: true }).sort((a, b) =>
			a.name < b.name ? -1 : a.name > b.name)) {
			if (e.name === '.git')
				continue;
			const p = rel ? `${rel}/${e.name}` : e.name;
			if (e.isDirectory()) {
				dirs.push(p);
				walk(p);
			} else {
				files.push(p);
			}
		}
	};
	walk('');
	return { files, dirs };
}

const PATTERNS = ['TODO', 'FIXME', 'handle_3_1', 'struct item_5_', 'LIMIT_1', 'helper_2', 'nothere_xyz'];
const FIND_NAMES = ['*.c', '*.h', '*.py', '*.md', 'file1*'];
const PY = [
	'import os; print(sorted(os.listdir("src")))',
	'import json; print(json.dumps({"a": [1, 2, 3], "b": {"c": None}}, sort_keys=True))',
	'import sys; print(sum(1 for _ in open(sys.argv[1])))',
	'import pathlib; print(len(list(pathlib.Path(".").rglob("*.c"))))',
	'import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest())',
];

// kind: [weight, make(pick) -> argv]. ls -la lists subdirectories only: the
// repository's root shows .git's and its parent's times, which other runs change.
function kinds(py, files, dirs) {
	const pick = (arr, r) => arr[r(arr.length)];
	return [
		['git status', 10, () => ['git', 'status']],
		['ls -la', 15, (r) => ['ls', '-la', pick(dirs, r)]],
		['grep -rn', 15, (r) => ['grep', '-rn', pick(PATTERNS, r), '.']],
		['cat', 20, (r) => ['cat', pick(files, r)]],
		['python3 -c', 10, (r) => {
			const k = r(PY.length);
			return [py, '-c', PY[k]].concat(k === 2 || k === 4 ? [pick(files, r)] : []);
		}],
		['sed -n', 20, (r) => ['sed', '-n', '1,20p', pick(files, r)]],
		['find', 10, (r) => ['find', '.', '-name', pick(FIND_NAMES, r)]],
	];
}

function commandList(o) {
	const { files, dirs } = listRepo();
	const ks = kinds(o.python, files, dirs);
	const total = ks.reduce((s, k) => s + k[1], 0);
	const r = rng(20240501);
	const warm = ks.map((k) => k[2](rng(1)));
	const list = [];
	for (let i = 0; i < o.count; i++) {
		let x = r(total), j = 0;
		while (x >= ks[j][1])
			x -= ks[j++][1];
		list.push(ks[j][2](r));
	}
	return { warm, list };
}

// ---- running ----

// Runs argv with pipes; resolves to { code, out, err } (code: the status, or -signal, or null
// when it could not be started, with the error's message in err).
function run(argv) {
	return new Promise((resolve) => {
		const out = [], err = [];
		let done = false;
		const child = spawn(argv[0], argv.slice(1), { stdio: ['pipe', 'pipe', 'pipe'] });
		child.stdin.end();
		child.stdout.on('data', (d) => out.push(d));
		child.stderr.on('data', (d) => err.push(d));
		child.on('error', (e) => {
			if (!done) {
				done = true;
				resolve({ code: null, out: Buffer.alloc(0), err: Buffer.from(String(e.message)) });
			}
		});
		child.on('close', (code, signal) => {
			if (!done) {
				done = true;
				resolve({ code: signal ? -1 : code, out: Buffer.concat(out), err: Buffer.concat(err) });
			}
		});
	});
}

function pct(sorted, p) {
	const k = Math.min(sorted.length, Math.max(1, Math.ceil(p / 100 * sorted.length)));
	return sorted[k - 1];
}

async function replay(o) {
	const { warm, list } = commandList(o);
	const wrap = (argv) => (o.bwrap ? BWRAP.concat(argv) : argv);
	for (const argv of warm)
		await run(wrap(argv));

	const all = crypto.createHash('sha256');
	const lines = [];
	const ms = [];
	let nonzero = 0, errors = 0, firstError = null;
	const t0 = process.hrtime.bigint();
	let n = 0;
	for (let i = o.round; i < list.length; i += o.rounds) {
		const a = process.hrtime.bigint();
		const res = await run(wrap(list[i]));
		const took = Number(process.hrtime.bigint() - a) / 1e6;
		ms.push(took);
		n++;
		if (res.code === null) {
			errors++;
			firstError = firstError || `${list[i].join(' ')}: ${res.err}`;
		} else if (res.code !== 0) {
			nonzero++;
		}
		const h = crypto.createHash('sha256');
		h.update(`${res.code}\0`).update(res.out).update('\0').update(res.err);
		const d = h.digest('hex');
		all.update(d);
		lines.push(`${i}\t${d}\t${took.toFixed(3)}\t${list[i].join(' ')}`);
	}
	const total = Number(process.hrtime.bigint() - t0) / 1e6;
	if (o.hashes)
		fs.writeFileSync(o.hashes, lines.join('\n') + '\n');
	if (firstError)
		process.stderr.write(`session_replay: ${errors} commands could not be started; first: ${firstError}\n`);
	const sorted = ms.slice().sort((x, y) => x - y);
	const f = (x) => x.toFixed(3);
	console.log(`label=${o.label} n=${n} total_ms=${f(total)} mean_ms=${f(total / n)} ` +
		`p50_ms=${f(pct(sorted, 50))} p90_ms=${f(pct(sorted, 90))} p99_ms=${f(pct(sorted, 99))} ` +
		`nonzero=${nonzero} errors=${errors} hash=${all.digest('hex')}`);
	return errors ? 1 : 0;
}

async function main() {
	let o;
	try {
		o = parseArgs(process.argv.slice(2));
	} catch (e) {
		process.stderr.write(`session_replay: ${e.message}\n`);
		return 2;
	}
	if (o.makeRepo) {
		makeRepo(o.makeRepo);
		return 0;
	}
	if (!fs.existsSync('.git/moat-replay-ok')) {
		process.stderr.write('session_replay: run it from a repository made by --make-repo\n');
		return 2;
	}
	return replay(o);
}

main().then((code) => { process.exitCode = code; }, (e) => {
	process.stderr.write(`session_replay: ${e.stack || e}\n`);
	process.exitCode = 1;
});
