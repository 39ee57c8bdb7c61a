// Rebuilds crates/node/contracts/{Karma,KarmaTiers}.json (the node crate embeds them) from contracts/src with the pinned
// solc-js (package.json): abi, creation and runtime bytecode, storage layout, the compiler
// version and the sha256 of the source. Deterministic: no metadata hash in the bytecode.
//   node build.mjs           write the artifacts
//   node build.mjs --check   exit 1 if the committed artifacts differ from a rebuild
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import solc from 'solc';

const root = dirname(fileURLToPath(import.meta.url));
const CONTRACTS = ['Karma', 'KarmaTiers'];
const check = process.argv.includes('--check');

const sources = Object.fromEntries(
  CONTRACTS.map((name) => [`${name}.sol`, { content: readFileSync(join(root, 'src', `${name}.sol`), 'utf8') }]),
);
const input = {
  language: 'Solidity',
  sources,
  settings: {
    optimizer: { enabled: true, runs: 200 },
    evmVersion: 'cancun',
    metadata: { appendCBOR: false },
    outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object', 'storageLayout'] } },
  },
};
const out = JSON.parse(solc.compile(JSON.stringify(input)));
const errors = (out.errors || []).filter((e) => e.severity === 'error');
if (errors.length) {
  for (const e of errors) console.error(e.formattedMessage);
  process.exit(1);
}

let stale = 0;
// The artifacts live in the node crate, which embeds them (bytecode) and generates its
// bindings from their ABI, so the crate builds on its own (`cargo package`).
const artifacts = join(root, '..', 'crates', 'node', 'contracts');
mkdirSync(artifacts, { recursive: true });
for (const name of CONTRACTS) {
  const c = out.contracts[`${name}.sol`][name];
  const artifact = {
    contractName: name,
    solcVersion: solc.version(),
    sourceHash: createHash('sha256').update(readFileSync(join(root, 'src', `${name}.sol`))).digest('hex'),
    abi: c.abi,
    bytecode: '0x' + c.evm.bytecode.object,
    deployedBytecode: '0x' + c.evm.deployedBytecode.object,
    storageLayout: c.storageLayout.storage.map(({ label, slot, offset, type }) => ({ label, slot, offset, type })),
  };
  const text = JSON.stringify(artifact, null, 2) + '\n';
  const path = join(artifacts, `${name}.json`);
  if (check) {
    if (!existsSync(path) || readFileSync(path, 'utf8') !== text) {
      console.error(`${name}: committed artifact is stale; run: node contracts/build.mjs`);
      stale++;
    }
  } else {
    writeFileSync(path, text);
    console.log(`${name}: ${(artifact.deployedBytecode.length - 2) / 2} bytes runtime (solc ${artifact.solcVersion})`);
  }
}
process.exit(stale ? 1 : 0);
