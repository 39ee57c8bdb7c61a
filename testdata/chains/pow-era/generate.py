"""Generates the pow-era test chain with py-evm (pip install py-evm==0.12.1b1):
Frontier at 0, Homestead at 3, Tangerine Whistle at 5, Spurious Dragon at 7, Byzantium at 9,
Constantinople and Petersburg at 11; 12 blocks with block rewards to the zero coinbase and
two uncles (rewarded to their own coinbases).
Writes genesis.json (geth format), chain.rlp (blocks 1..12, concatenated RLP as `geth export`
writes them) and expected.json (hashes and the head state of every touched account).

    python generate.py OUT_DIR
"""
import json, sys, os
import rlp
from eth_keys import keys
from eth_utils import to_canonical_address, to_checksum_address, encode_hex, decode_hex
from eth import constants
from eth._utils.address import generate_contract_address
from eth.chains.base import MiningChain
from eth.db.atomic import AtomicDB
from eth.tools.builder.chain import (
    build, frontier_at, homestead_at, tangerine_whistle_at, spurious_dragon_at, byzantium_at,
    petersburg_at, disable_pow_check, genesis, chain_id as with_chain_id,
)

out = sys.argv[1]
CHAIN_ID = 1337
KEY = keys.PrivateKey(b"\x11" * 32)
SENDER = KEY.public_key.to_canonical_address()
OTHER = keys.PrivateKey(b"\x22" * 32)
OTHER_ADDR = OTHER.public_key.to_canonical_address()
RECIPIENTS = [bytes([0x30 + i]) * 20 for i in range(8)]

GENESIS_PARAMS = {
    "difficulty": 131072,
    "gas_limit": 8_000_000,
    "timestamp": 1_500_000_000,
    "extra_data": b"pow-era",
    "nonce": b"\x00\x00\x00\x00\x00\x00\x00\x42",
    "mix_hash": b"\x00" * 32,
    "coinbase": b"\x00" * 20,
}
GENESIS_STATE = {
    SENDER: {"balance": 10**21, "nonce": 0, "code": b"", "storage": {}},
    OTHER_ADDR: {"balance": 10**20, "nonce": 0, "code": b"", "storage": {}},
}

chain = build(
    MiningChain,
    frontier_at(0), homestead_at(3), tangerine_whistle_at(5), spurious_dragon_at(7),
    byzantium_at(9), petersburg_at(11),
    with_chain_id(CHAIN_ID),
    disable_pow_check(),
    genesis(db=AtomicDB(), params=GENESIS_PARAMS, state=GENESIS_STATE),
)

nonces = {SENDER: 0, OTHER_ADDR: 0}

def tx(key, to, value, data=b"", gas=21000, eip155=False):
    addr = key.public_key.to_canonical_address()
    vm = chain.get_vm()
    unsigned = vm.create_unsigned_transaction(
        nonce=nonces[addr], gas_price=10**9, gas=gas, to=to, value=value, data=data)
    nonces[addr] += 1
    if eip155:
        return unsigned.as_signed_transaction(key, chain_id=CHAIN_ID)
    return unsigned.as_signed_transaction(key)

# A counter: the runtime adds 1 to slot 0 (PUSH1 0 SLOAD PUSH1 1 ADD PUSH1 0 SSTORE); the init
# code stores 7 there, copies the runtime and returns it.
runtime = bytes.fromhex("600054600101600055")
init = (bytes.fromhex("6007600055")                       # SSTORE(0, 7)
        + bytes.fromhex("60") + bytes([len(runtime)])     # PUSH1 len
        + bytes.fromhex("80")                             # DUP1
        + bytes.fromhex("600e")                           # PUSH1 offset (patched below)
        + bytes.fromhex("6000")                           # PUSH1 0
        + bytes.fromhex("39")                             # CODECOPY(0, offset, len)
        + bytes.fromhex("6000")                           # PUSH1 0
        + bytes.fromhex("f3"))                            # RETURN(0, len)
init = init[:9] + bytes([len(init)]) + init[10:]
init = init + runtime

contract = None
plans = {
    1: lambda: [tx(KEY, RECIPIENTS[0], 1000), tx(OTHER, RECIPIENTS[1], 5)],
    2: lambda: [tx(KEY, constants.CREATE_CONTRACT_ADDRESS, 0, init, gas=200_000)],
    3: lambda: [tx(KEY, contract, 0, b"", gas=50_000), tx(KEY, RECIPIENTS[2], 0)],
    4: lambda: [tx(KEY, contract, 0, b"", gas=21_500)],  # out of gas: failed, pre-Byzantium
    5: lambda: [tx(OTHER, RECIPIENTS[3], 7), tx(KEY, contract, 0, b"", gas=50_000)],
    6: lambda: [],
    7: lambda: [tx(KEY, RECIPIENTS[4], 0, eip155=True), tx(KEY, RECIPIENTS[5], 1, eip155=True)],
    8: lambda: [tx(KEY, contract, 0, b"", gas=21_500, eip155=True)],
    9: lambda: [tx(KEY, contract, 0, b"", gas=21_500, eip155=True), tx(OTHER, RECIPIENTS[6], 9, eip155=True)],
    10: lambda: [tx(KEY, contract, 0, b"", gas=50_000, eip155=True)],
    11: lambda: [tx(KEY, contract, 0, b"", gas=50_000, eip155=True), tx(KEY, RECIPIENTS[7], 3, eip155=True)],
    12: lambda: [],
}
# Uncles: block 6 includes a sibling of block 4 (two generations back), block 10 a sibling of
# block 9 (one back); each is an empty header from its own coinbase.
UNCLE_COINBASES = {6: b"\xd4" * 20, 10: b"\xd9" * 20}
UNCLE_OF = {6: 4, 10: 9}


def uncle_for(number):
    height = UNCLE_OF[number]
    parent = chain.get_canonical_block_by_number(height - 1).header
    vm = chain.get_vm(chain.get_canonical_block_by_number(height).header)
    header = vm.create_header_from_parent(
        parent, coinbase=UNCLE_COINBASES[number], timestamp=parent.timestamp + 14,
        extra_data=b"uncle")
    return header.copy(state_root=parent.state_root)


blocks = []
for number in range(1, 13):
    for t in plans[number]():
        chain.apply_transaction(t)
    chain.set_header_timestamp(GENESIS_PARAMS["timestamp"] + 13 * number)
    if number in UNCLE_OF:
        blocks.append(chain.mine_block(uncles=[uncle_for(number)]))
    else:
        blocks.append(chain.mine_block())
    if number == 2:
        contract = generate_contract_address(SENDER, 1)

os.makedirs(out, exist_ok=True)
with open(os.path.join(out, "chain.rlp"), "wb") as f:
    for b in blocks:
        f.write(rlp.encode(b))

g = chain.get_canonical_block_by_number(0).header
config = {
    "chainId": CHAIN_ID, "homesteadBlock": 3, "eip150Block": 5, "eip155Block": 7,
    "eip158Block": 7, "byzantiumBlock": 9, "constantinopleBlock": 11, "petersburgBlock": 11,
    "ethash": {},
}
alloc = {to_checksum_address(a): {"balance": hex(v["balance"])} for a, v in GENESIS_STATE.items()}
genesis_json = {
    "config": config,
    "nonce": encode_hex(g.nonce), "timestamp": hex(g.timestamp), "extraData": encode_hex(g.extra_data),
    "gasLimit": hex(g.gas_limit), "difficulty": hex(g.difficulty), "mixHash": encode_hex(g.mix_hash),
    "coinbase": to_checksum_address(g.coinbase), "alloc": alloc,
}
with open(os.path.join(out, "genesis.json"), "w") as f:
    json.dump(genesis_json, f, indent=2)

state = chain.get_vm().state
accounts = [SENDER, OTHER_ADDR, contract, blocks[0].header.coinbase] + list(UNCLE_COINBASES.values()) + RECIPIENTS
expected = {
    "genesisHash": encode_hex(g.hash),
    "headHash": encode_hex(blocks[-1].header.hash),
    "headStateRoot": encode_hex(blocks[-1].header.state_root),
    "accounts": {
        to_checksum_address(a): {
            "balance": hex(state.get_balance(a)), "nonce": state.get_nonce(a),
            "code": encode_hex(state.get_code(a)), "slot0": hex(state.get_storage(a, 0)),
        } for a in accounts
    },
}
with open(os.path.join(out, "expected.json"), "w") as f:
    json.dump(expected, f, indent=2)
