"""web3.py suite: deploys and drives the Token through web3.py, signing with eth_account.

Usage: python suites/web3_suite.py HTTP_URL. Dev account 3 signs; never eth_sendTransaction.
"""
import json
import os
import sys
import time
import traceback
from pathlib import Path

from eth_account import Account
from web3 import Web3
from web3.middleware import ExtraDataToPOAMiddleware
from web3.exceptions import ContractLogicError

SUITE = "web3py"
HERE = Path(__file__).resolve().parent.parent
TX_TIMEOUT = float(os.environ.get("E2E_TX_TIMEOUT", "60"))
POLL = float(os.environ.get("E2E_POLL_MS", "250")) / 1000
TRANSFER_TOPIC = "ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"

passed = failed = 0


def test(name):
    def deco(fn):
        global passed, failed
        try:
            fn()
            passed += 1
            print(f"  ok     {SUITE}: {name}", flush=True)
        except Exception as e:  # noqa: BLE001 - any failure counts
            failed += 1
            msg = " ".join(f"{type(e).__name__}: {e}".split())[:1500]
            print(f"  FAIL   {SUITE}: {name} -- {msg}", flush=True)
            if os.environ.get("E2E_VERBOSE"):
                traceback.print_exc()
        return fn
    return deco


url = sys.argv[1]
print(f"== web3.py suite against {url}")
w3 = Web3(Web3.HTTPProvider(url, request_kwargs={"timeout": 30}))
# Clique-sealed chains (l2node, Linea) carry a 97-byte extraData: web3.py users inject the
# proof-of-authority middleware, as its documentation says; it is a no-op on other chains.
w3.middleware_onion.inject(ExtraDataToPOAMiddleware, layer=0)
accounts = json.loads((HERE / "lib" / "accounts.json").read_text())
acct = Account.from_key(accounts[3]["privateKey"])
OTHER = Web3.to_checksum_address(accounts[7]["address"])
build = json.loads((HERE / "build" / "Token.json").read_text())
SUPPLY = 10**24
state = {}


def fees():
    """EIP-1559 fees from the node: priority fee + 2x latest base fee (0 base fee is fine)."""
    base = w3.eth.get_block("latest").get("baseFeePerGas", 0)
    tip = w3.eth.max_priority_fee
    return {"maxPriorityFeePerGas": tip, "maxFeePerGas": 2 * base + tip}


def sign_and_send(tx):
    tx = dict(tx)
    tx.setdefault("from", acct.address)
    tx.setdefault("chainId", w3.eth.chain_id)
    tx.setdefault("nonce", w3.eth.get_transaction_count(acct.address, "pending"))
    tx.update({k: v for k, v in fees().items() if k not in tx})
    if "gas" not in tx:
        tx["gas"] = w3.eth.estimate_gas(tx)
    signed = acct.sign_transaction(tx)
    h = w3.eth.send_raw_transaction(signed.raw_transaction)
    return w3.eth.wait_for_transaction_receipt(h, timeout=TX_TIMEOUT, poll_latency=POLL)


@test("connect: is_connected and client version")
def _():
    assert w3.is_connected()
    assert isinstance(w3.client_version, str) and w3.client_version


@test("chain_id is a positive integer")
def _():
    cid = w3.eth.chain_id
    assert isinstance(cid, int) and cid > 0, cid
    exp = os.environ.get("E2E_EXPECT_CHAIN_ID")
    if exp:
        assert cid == int(exp), (cid, exp)


@test("dev account 3 is funded")
def _():
    assert w3.eth.get_balance(acct.address) > 10**18


@test("deploy Token with an eth_account-signed raw tx")
def _():
    Token = w3.eth.contract(abi=build["abi"], bytecode=build["bytecode"])
    tx = Token.constructor(SUPPLY).build_transaction({"from": acct.address, **fees()})
    r = sign_and_send(tx)
    assert r.status == 1, r
    assert r.contractAddress
    state["token"] = w3.eth.contract(address=r.contractAddress, abi=build["abi"])
    assert len(w3.eth.get_code(r.contractAddress)) > 50


@test("call: balanceOf(deployer) == supply, symbol() == E2E")
def _():
    t = state["token"]
    assert t.functions.balanceOf(acct.address).call() == SUPPLY
    assert t.functions.symbol().call() == "E2E"


@test("transfer: signed token transfer, receipt status 1 with a Transfer log")
def _():
    t = state["token"]
    tx = t.functions.transfer(OTHER, 5555).build_transaction({"from": acct.address, **fees()})
    r = sign_and_send(tx)
    assert r.status == 1, r
    assert len(r.logs) == 1 and r.logs[0]["topics"][0].hex().removeprefix("0x") == TRANSFER_TOPIC
    state["receipt"] = r
    ev = t.events.Transfer().process_receipt(r)
    assert ev[0]["args"]["value"] == 5555 and ev[0]["args"]["to"] == OTHER


@test("get_proof at an old block: the state before the transfer, rooted in that block")
def _():
    token, r = state["token"].address, state["receipt"]
    slot = Web3.solidity_keccak(["uint256", "uint256"], [int(OTHER, 16), 1])
    for number, other_balance in ((r.blockNumber - 1, 0), (r.blockNumber, 5555)):
        root = w3.eth.get_block(number).stateRoot
        p = w3.eth.get_proof(token, [slot], number)
        assert Web3.keccak(p.accountProof[0]) == root, (number, p)
        value = int.from_bytes(p.storageProof[0].value, "big")
        assert value == other_balance, (number, p.storageProof[0])
        p = w3.eth.get_proof(acct.address, [], number)
        assert Web3.keccak(p.accountProof[0]) == root, (number, p)
        assert p.nonce == w3.eth.get_transaction_count(acct.address, number), (number, p)
        assert p.balance == w3.eth.get_balance(acct.address, number), (number, p)


@test("receipt: get_transaction_receipt / get_transaction agree")
def _():
    r = state["receipt"]
    r2 = w3.eth.get_transaction_receipt(r.transactionHash)
    assert r2.blockHash == r.blockHash and r2.status == 1
    tx = w3.eth.get_transaction(r.transactionHash)
    assert tx["from"] == acct.address and tx["blockNumber"] == r.blockNumber
    assert state["token"].functions.balanceOf(OTHER).call() >= 5555


@test("ETH transfer: balance moves by exactly the value, gasUsed 21000")
def _():
    before = w3.eth.get_balance(OTHER)
    r = sign_and_send({"to": OTHER, "value": 31337})
    assert r.status == 1 and r.gasUsed == 21000
    assert w3.eth.get_balance(OTHER, r.blockNumber) - before == 31337


@test("get_logs: address + topics filter over the transfer block")
def _():
    r, t = state["receipt"], state["token"]
    to_topic = "0x" + "00" * 12 + OTHER[2:].lower()
    logs = w3.eth.get_logs({"fromBlock": r.blockNumber, "toBlock": r.blockNumber, "address": t.address,
                            "topics": ["0x" + TRANSFER_TOPIC, None, to_topic]})
    assert len(logs) == 1 and logs[0]["transactionHash"] == r.transactionHash, logs
    ev = t.events.Transfer().get_logs(from_block=0, to_block="latest", argument_filters={"to": OTHER})
    assert any(e["transactionHash"] == r.transactionHash for e in ev)
    none = w3.eth.get_logs({"fromBlock": r.blockNumber, "toBlock": r.blockNumber, "address": OTHER})
    assert none == [], none


@test("estimate_gas: ETH transfer == 21000, token transfer > 21000")
def _():
    assert w3.eth.estimate_gas({"from": acct.address, "to": OTHER, "value": 1}) == 21000
    g = state["token"].functions.transfer(OTHER, 1).estimate_gas({"from": acct.address})
    assert 21000 < g < 200000, g


@test("revert reason 'nope' surfaces as ContractLogicError (call and estimate)")
def _():
    t = state["token"]
    for fn in (lambda: t.functions.fail().call({"from": acct.address}),
               lambda: t.functions.fail().estimate_gas({"from": acct.address})):
        try:
            fn()
        except ContractLogicError as e:
            assert "nope" in str(e), str(e)
        else:
            raise AssertionError("fail() did not raise")


@test("get_block: latest, by number with full txs, and by hash")
def _():
    r = state["receipt"]
    latest = w3.eth.get_block("latest")
    assert latest.number >= r.blockNumber and latest.timestamp > 0
    b = w3.eth.get_block(r.blockNumber, full_transactions=True)
    assert any(tx["hash"] == r.transactionHash for tx in b.transactions)
    assert w3.eth.get_block(b.hash).number == r.blockNumber
    if r.blockNumber > 0:
        assert w3.eth.get_block(r.blockNumber - 1).hash == b.parentHash


@test("fee_history(4, latest, [10, 90]) is well-formed")
def _():
    fh = w3.eth.fee_history(4, "latest", [10, 90])
    n = len(fh["gasUsedRatio"])
    assert 1 <= n <= 4
    assert len(fh["baseFeePerGas"]) == n + 1
    assert len(fh["reward"]) == n and all(len(x) == 2 for x in fh["reward"])
    assert fh["oldestBlock"] >= 0
    assert w3.eth.gas_price >= 0


@test("nonce accounting: transaction count == pending count after receipts")
def _():
    assert w3.eth.get_transaction_count(acct.address) == w3.eth.get_transaction_count(acct.address, "pending")


@test("l2_estimateGas: gasLimit == eth_estimateGas, gasless for dev account 3 (s-tier Karma)")
def _():
    call = {"from": acct.address, "to": OTHER, "value": "0x1"}
    e = w3.provider.make_request("l2_estimateGas", [call])["result"]
    assert int(e["gasLimit"], 16) == w3.eth.estimate_gas({"from": acct.address, "to": OTHER, "value": 1})
    assert int(e["priorityFeePerGas"], 16) == 0, e
    status = w3.provider.make_request("l2_getKarmaStatus", [acct.address])["result"]
    assert status["feeState"] == "gasless" and status["tier"]["name"] == "s-tier", status


print(f"{SUITE} suite: {passed} passed, {failed} failed")
if os.environ.get("E2E_RESULTS"):
    Path(os.environ["E2E_RESULTS"], f"{SUITE}.counts").write_text(f"{passed} {failed}\n")
sys.exit(1 if failed else 0)
