// Compiles e2e/contracts/Token.sol with solc-js and writes e2e/build/Token.json
// ({abi, bytecode}) plus Token.bin / Token.abi for cast. Deterministic: same solc
// version (pinned in package.json), optimizer on (200 runs), evmVersion "paris".
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import solc from 'solc';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const source = readFileSync(join(root, 'contracts', 'Token.sol'), 'utf8');
const input = {
  language: 'Solidity',
  sources: { 'Token.sol': { content: source } },
  settings: {
    optimizer: { enabled: true, runs: 200 },
    evmVersion: 'paris',
    outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
  },
};
const out = JSON.parse(solc.compile(JSON.stringify(input)));
const errors = (out.errors || []).filter((e) => e.severity === 'error');
if (errors.length) {
  for (const e of errors) console.error(e.formattedMessage);
  process.exit(1);
}
const c = out.contracts['Token.sol'].Token;
const build = join(root, 'build');
mkdirSync(build, { recursive: true });
const bytecode = '0x' + c.evm.bytecode.object;
writeFileSync(join(build, 'Token.json'), JSON.stringify({ abi: c.abi, bytecode }, null, 2));
writeFileSync(join(build, 'Token.bin'), bytecode + '\n');
writeFileSync(join(build, 'Token.abi'), JSON.stringify(c.abi));
console.log(`compiled Token with solc ${solc.version()} -> build/Token.json (${(bytecode.length - 2) / 2} bytes)`);
