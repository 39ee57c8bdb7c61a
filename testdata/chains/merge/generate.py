"""Generates the merge-transition test chain with py-evm (pip install py-evm==0.12.1b1):
Berlin at 0, London at 2, the merge (Paris) at 4, Shanghai at 6, Cancun at 8; 10 blocks of
proof-of-work then proof-of-stake, with transfers, withdrawals from Shanghai on, and no block
rewards after the merge. Writes genesis.json (geth format, the merge by mergeNetsplitBlock and
terminalTotalDifficulty, Shanghai and Cancun by time), chain.rlp (blocks 1..10, concatenated RLP
as `geth export` writes them) and expected.json (hashes and the head state of every touched
account).

    python generate.py OUT_DIR
"""
import json, os, sys

import rlp
from eth_keys import keys
from eth_utils import encode_hex, to_checksum_address
from eth.chains.base import MiningChain
from eth.db.atomic import AtomicDB
from eth.tools.builder.chain import (
    berlin_at, build, cancun_at, chain_id as with_chain_id, disable_pow_check, genesis,
    london_at, paris_at, shanghai_at,
)
from eth.vm.forks.shanghai.withdrawals import Withdrawal

out = sys.argv[1]
CHAIN_ID = 1338
KEY = keys.PrivateKey(b"\x33" * 32)
SENDER = KEY.public_key.to_canonical_address()
RECIPIENTS = [bytes([0x40 + i]) * 20 for i in range(6)]
VALIDATORS = [bytes([0x50 + i]) * 20 for i in range(2)]
T0 = 1_600_000_000

GENESIS_PARAMS = {
    "difficulty": 131072, "gas_limit": 15_000_000, "timestamp": T0, "extra_data": b"merge",
    "nonce": b"\x00" * 7 + b"\x07", "mix_hash": b"\x00" * 32, "coinbase": b"\x00" * 20,
}
GENESIS_STATE = {SENDER: {"balance": 10**21, "nonce": 0, "code": b"", "storage": {}}}

chain = build(
    MiningChain,
    berlin_at(0), london_at(2), paris_at(4), shanghai_at(6), cancun_at(8),
    with_chain_id(CHAIN_ID),
    disable_pow_check(),
    genesis(db=AtomicDB(), params=GENESIS_PARAMS, state=GENESIS_STATE),
)

nonce = 0


def transfer(to, value):
    global nonce
    vm = chain.get_vm()
    unsigned = vm.create_unsigned_transaction(
        nonce=nonce, gas_price=10 * 10**9, gas=21000, to=to, value=value, data=b"")
    nonce += 1
    return unsigned.as_signed_transaction(KEY, chain_id=CHAIN_ID)


COINBASES = {n: bytes([0xc0 + n]) * 20 for n in range(1, 11)}
blocks = []
for number in range(1, 11):
    txs = [transfer(RECIPIENTS[number % len(RECIPIENTS)], 1000 + number)]
    if number % 3 == 0:
        txs.append(transfer(RECIPIENTS[(number + 1) % len(RECIPIENTS)], 0))
    withdrawals = None
    if number >= 6:
        withdrawals = [
            Withdrawal(index=2 * number + i, validator_index=7 + i, address=VALIDATORS[i],
                       amount=10**9 * number)  # gwei
            for i in range(2)
        ]
    chain.set_header_timestamp(T0 + 12 * number)
    kwargs = {"coinbase": COINBASES[number]}
    if number >= 4:
        kwargs["mix_hash"] = bytes([number]) * 32  # prevRandao
    result, _, _ = chain.mine_all(txs, withdrawals=withdrawals, **kwargs)
    blocks.append(result.imported_block)

os.makedirs(out, exist_ok=True)
with open(os.path.join(out, "chain.rlp"), "wb") as f:
    for b in blocks:
        f.write(rlp.encode(b))

headers = [chain.get_canonical_block_by_number(n).header for n in range(0, 11)]
ttd = sum(h.difficulty for h in headers[:4])
g = headers[0]
config = {
    "chainId": CHAIN_ID, "homesteadBlock": 0, "eip150Block": 0, "eip155Block": 0,
    "eip158Block": 0, "byzantiumBlock": 0, "constantinopleBlock": 0, "petersburgBlock": 0,
    "istanbulBlock": 0, "berlinBlock": 0, "londonBlock": 2, "mergeNetsplitBlock": 4,
    "terminalTotalDifficulty": ttd, "shanghaiTime": headers[6].timestamp,
    "cancunTime": headers[8].timestamp, "ethash": {},
}
genesis_json = {
    "config": config,
    "nonce": encode_hex(g.nonce), "timestamp": hex(g.timestamp), "extraData": encode_hex(g.extra_data),
    "gasLimit": hex(g.gas_limit), "difficulty": hex(g.difficulty), "mixHash": encode_hex(g.mix_hash),
    "coinbase": to_checksum_address(g.coinbase),
    "alloc": {to_checksum_address(a): {"balance": hex(v["balance"])} for a, v in GENESIS_STATE.items()},
}
with open(os.path.join(out, "genesis.json"), "w") as f:
    json.dump(genesis_json, f, indent=2)

state = chain.get_vm().state
accounts = [SENDER] + RECIPIENTS + VALIDATORS + list(COINBASES.values())
expected = {
    "genesisHash": encode_hex(g.hash),
    "headHash": encode_hex(headers[-1].hash),
    "accounts": {
        to_checksum_address(a): {"balance": hex(state.get_balance(a)), "nonce": state.get_nonce(a)}
        for a in accounts
    },
}
with open(os.path.join(out, "expected.json"), "w") as f:
    json.dump(expected, f, indent=2)
