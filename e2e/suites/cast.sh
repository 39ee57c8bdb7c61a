#!/usr/bin/env bash
# cast suite: drives a node with foundry's `cast` CLI. Usage: suites/cast.sh HTTP_URL
# Signs locally with --private-key (dev account 1); never uses eth_sendTransaction.
set -u
HERE="$(cd "$(dirname "$0")/.." && pwd)"
SUITE=cast
. "$HERE/lib/report.sh"

RPC="${1:?usage: cast.sh HTTP_URL}"
CAST="${CAST:-$HERE/node_modules/.bin/cast}"
TX_TIMEOUT="${E2E_TX_TIMEOUT:-60}"     # seconds to wait for a receipt
CMD_TIMEOUT="${E2E_CMD_TIMEOUT:-30}"   # seconds for any single read-only cast command
BIN="$HERE/build/Token.bin"
export ETH_RPC_URL="$RPC"
# Keep foundry from writing caches/telemetry into $HOME during CI.
export FOUNDRY_DISABLE_NIGHTLY_WARNING=1

KEY=0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d   # dev account 1
FROM=0x70997970C51812dc3A010C7d01b50e0d17dc79C8
TO=0xa0Ee7A142d267C1f36714E4a8F75612F20a79720                            # dev account 9
TRANSFER_TOPIC=0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef

c() { timeout "$CMD_TIMEOUT" "$CAST" "$@" 2>&1; }
send() { timeout $((TX_TIMEOUT + 15)) "$CAST" send --private-key "$KEY" --timeout "$TX_TIMEOUT" --json "$@" 2>&1; }
jget() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{try{const o=JSON.parse(s);const v=process.argv[1].split(".").reduce((a,k)=>a==null?a:a[k],o);console.log(v===undefined||v===null?"":typeof v==="object"?JSON.stringify(v):v)}catch(e){console.log("")}})' "$1"; }
isnum() { [[ "$1" =~ ^[0-9]+$ ]]; }
tohex() { printf '0x%x' "$1"; }

echo "== cast suite against $RPC"

# 1. chain-id
CHAIN_ID=$(c chain-id)
isnum "$CHAIN_ID" && [ "$CHAIN_ID" -gt 0 ]; check "chain-id is a positive integer ($CHAIN_ID)" $? "$CHAIN_ID"
RAW_CHAIN=$(c rpc eth_chainId | tr -d '"')
[ "$(( RAW_CHAIN ))" = "$CHAIN_ID" ]; check "eth_chainId (cast rpc) agrees with chain-id" $? "$RAW_CHAIN"
if [ -n "${E2E_EXPECT_CHAIN_ID:-}" ]; then
  [ "$CHAIN_ID" = "$E2E_EXPECT_CHAIN_ID" ]; check "chain-id equals E2E_EXPECT_CHAIN_ID" $? "$CHAIN_ID"
fi

# 2. block-number
BN0=$(c block-number)
isnum "$BN0"; check "block-number is an integer ($BN0)" $? "$BN0"

# 3. balance
BAL=$(c balance "$FROM")
isnum "$BAL" && [ "$BAL" != 0 ]; check "balance of dev account 1 is funded" $? "$BAL"

# 4. signed ETH transfer (local signing, eth_sendRawTransaction), waits for the receipt
TO_BEFORE=$(c balance "$TO")
OUT=$(send "$TO" --value 1000000000)
TX=$(echo "$OUT" | jget transactionHash)
STATUS=$(echo "$OUT" | jget status)
[ -n "$TX" ] && [ "$STATUS" = "0x1" ] ; check "send signed ETH transfer with --private-key, status 1" $? "$OUT"
TO_AFTER=$(c balance "$TO")
[ "$(node -e "console.log(String(BigInt('$TO_AFTER')-BigInt('$TO_BEFORE')))" 2>/dev/null)" = 1000000000 ]
check "recipient balance rose by exactly 1 gwei" $? "$TO_BEFORE -> $TO_AFTER"

# 5. receipt
RC=$(c receipt "$TX" --json)
[ "$(echo "$RC" | jget transactionHash)" = "$TX" ] && [ "$(echo "$RC" | jget status)" = 0x1 ] \
  && [ "$(echo "$RC" | jget gasUsed)" = 0x5208 ] && [ -n "$(echo "$RC" | jget blockHash)" ]
check "receipt: hash, status 1, gasUsed 21000, blockHash" $? "$RC"
TX_JSON=$(c tx "$TX" --json)
[ "$(echo "$TX_JSON" | jget from | tr A-F a-f)" = "$(echo "$FROM" | tr A-F a-f)" ]
check "tx by hash reports the signer as from" $? "$TX_JSON"

# 6. deploy the token with --create
SUPPLY=1000000000000000000000000
OUT=$(send --create "$(cat "$BIN")" "constructor(uint256)" "$SUPPLY")
TOKEN=$(echo "$OUT" | jget contractAddress)
[ -n "$TOKEN" ] && [ "$(echo "$OUT" | jget status)" = 0x1 ]; check "send --create deploys Token ($TOKEN)" $? "$OUT"
CODE=$(c code "$TOKEN")
[ ${#CODE} -gt 100 ]; check "deployed code is non-empty" $? "${CODE:0:80}"

# 7. call balanceOf
B=$(c call "$TOKEN" "balanceOf(address)(uint256)" "$FROM" | awk '{print $1}')
[ "$B" = "$SUPPLY" ]; check "call balanceOf(deployer) == supply" $? "$B"
NAME=$(c call "$TOKEN" "name()(string)")
[ "$NAME" = '"E2E Token"' ]; check "call name() decodes a string" $? "$NAME"

# 8. token transfer + balances
OUT=$(send "$TOKEN" "transfer(address,uint256)" "$TO" 12345)
TTX=$(echo "$OUT" | jget transactionHash)
TBLOCK=$(echo "$OUT" | jget blockNumber)
[ "$(echo "$OUT" | jget status)" = 0x1 ]; check "send token transfer(), status 1" $? "$OUT"
B=$(c call "$TOKEN" "balanceOf(address)(uint256)" "$TO" | awk '{print $1}')
[ "$B" = 12345 ]; check "call balanceOf(recipient) == 12345 after transfer" $? "$B"
NLOGS=$(echo "$OUT" | jget logs | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s||"[]").length))')
[ "$NLOGS" = 1 ]; check "transfer receipt carries exactly one log" $? "$NLOGS"

# 8b. replays: cast run re-executes the transfer on the parent block's state (archive reads),
# cast call --trace traces a call locally, both with the node as the state source.
RUN=$(timeout 120 "$CAST" run "$TTX" 2>&1)
echo "$RUN" | grep -q "transfer(" && echo "$RUN" | grep -q "Transfer(" && echo "$RUN" | grep -q "Transaction successfully executed"
check "cast run replays the token transfer with its call and Transfer event" $? "$RUN"
TRACE=$(c call --trace "$TOKEN" "transfer(address,uint256)" "$TO" 1 --from "$FROM")
echo "$TRACE" | grep -q "transfer(" && echo "$TRACE" | grep -q "Transfer("
check "cast call --trace shows the call and its Transfer event" $? "$TRACE"

# 9. logs with event signature and address filter
TB=$(( TBLOCK ))
LOGS=$(c logs --from-block "$TB" --to-block "$TB" --address "$TOKEN" "Transfer(address indexed,address indexed,uint256)" --json)
echo "$LOGS" | node -e '
let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const l=JSON.parse(s);const [t,tx,to]=process.argv.slice(1);
const ok=l.length===1&&l[0].topics[0]===t&&l[0].transactionHash===tx&&l[0].topics[2].toLowerCase().endsWith(to.slice(2).toLowerCase())&&BigInt(l[0].data)===12345n;
process.exit(ok?0:1)})' "$TRANSFER_TOPIC" "$TTX" "$TO"
check "logs: Transfer event by signature+address in the tx block" $? "$LOGS"
LOGS=$(c logs --from-block "$TB" --to-block "$TB" --address "$TOKEN" "Transfer(address indexed,address indexed,uint256)" "" "$FROM" --json)
[ "$(echo "$LOGS" | jget 0.transactionHash)" = "" ]
check "logs: topic filter on 'to' excludes non-matching events" $? "$LOGS"

# 10. block latest
BL=$(c block latest --json)
BLN=$(echo "$BL" | jget number)
[ -n "$BLN" ] && [ $(( BLN )) -ge "$TB" ] && [ -n "$(echo "$BL" | jget hash)" ] && [ -n "$(echo "$BL" | jget timestamp)" ]
check "block latest: number >= transfer block, hash, timestamp" $? "${BL:0:300}"
BT=$(c block "$TB" --json)
echo "$BT" | grep -qi "${TTX}"; check "block by number lists the transfer tx" $? "${BT:0:300}"
BN1=$(c block-number)
isnum "$BN1" && [ "$BN1" -gt "$BN0" ]; check "block-number advanced after txs ($BN0 -> $BN1)" $? "$BN1"

# 11. estimate
E=$(c estimate --from "$FROM" "$TO" --value 1)
[ "$E" = 21000 ]; check "estimate of a plain ETH transfer == 21000" $? "$E"
E=$(c estimate --from "$FROM" "$TOKEN" "transfer(address,uint256)" "$TO" 1)
isnum "$E" && [ "$E" -gt 21000 ] && [ "$E" -lt 200000 ]; check "estimate of token transfer in (21000, 200000) ($E)" $? "$E"

# 12. revert reasons surface
R=$(c call "$TOKEN" "fail()"); rc=$?
[ $rc -ne 0 ] && echo "$R" | grep -q nope; check "call fail() errors with reason 'nope'" $? "rc=$rc $R"
R=$(c estimate --from "$FROM" "$TOKEN" "fail()"); rc=$?
[ $rc -ne 0 ] && echo "$R" | grep -q nope; check "estimate fail() errors with reason 'nope'" $? "rc=$rc $R"
R=$(timeout $((TX_TIMEOUT + 15)) "$CAST" send --private-key "$KEY" --timeout "$TX_TIMEOUT" "$TOKEN" "fail()" 2>&1); rc=$?
[ $rc -ne 0 ] && echo "$R" | grep -q nope; check "send fail() is refused with reason 'nope' (gas estimation)" $? "rc=$rc $R"
# forced on chain with a fixed gas limit: mined, status 0
OUT=$(send --gas-limit 100000 "$TOKEN" "fail()")
[ "$(echo "$OUT" | jget status)" = 0x0 ]; check "reverting tx with fixed gas is mined with status 0" $? "$OUT"

# 13. Karma-aware fees: l2_estimateGas / linea_estimateGas, gasless and premium sends built from
# the estimate (gas = gasLimit, priority = priorityFeePerGas, maxFee = 2 x base + priority).
KEY9=0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6  # dev account 9: no Karma
FROM9=0xa0Ee7A142d267C1f36714E4a8F75612F20a79720
CALL="{\"from\":\"$FROM\",\"to\":\"$TO\",\"value\":\"0x1\"}"
L2=$(c rpc l2_estimateGas "$CALL")
LINEA=$(c rpc linea_estimateGas "$CALL")
GL=$(echo "$L2" | jget gasLimit); BASE=$(echo "$L2" | jget baseFeePerGas); PRIO=$(echo "$L2" | jget priorityFeePerGas)
[[ "$GL" =~ ^0x[0-9a-f]+$ && "$BASE" =~ ^0x[0-9a-f]+$ && "$PRIO" =~ ^0x[0-9a-f]+$ ]] && [ "$(( GL ))" = 21000 ]
check "l2_estimateGas returns hex gasLimit (21000), baseFeePerGas, priorityFeePerGas" $? "$L2"
[ "$L2" = "$LINEA" ]; check "linea_estimateGas answers the same as l2_estimateGas" $? "$L2 / $LINEA"
[ "$(( PRIO ))" = 0 ]; check "dev account 1 (Karma) is quoted gasless" $? "$L2"
OUT=$(send --gas-limit "$(( GL ))" --gas-price "$(( 2 * BASE + PRIO ))" --priority-gas-price "$(( PRIO ))" "$TO" --value 1)
[ "$(echo "$OUT" | jget status)" = 0x1 ] && [ "$(( $(echo "$OUT" | jget effectiveGasPrice) ))" = 0 ]
check "gasless send from the estimate's fields: status 1, effective gas price 0" $? "$OUT"

CALL9="{\"from\":\"$FROM9\",\"to\":\"$FROM\",\"value\":\"0x1\"}"
E9=$(c rpc l2_estimateGas "$CALL9")
GL9=$(echo "$E9" | jget gasLimit); BASE9=$(echo "$E9" | jget baseFeePerGas); PRIO9=$(echo "$E9" | jget priorityFeePerGas)
[ -n "$PRIO9" ] && [ "$(( PRIO9 ))" -ge 12000000000 ]; check "sender without Karma is quoted premium (>= 12 gwei)" $? "$E9"
ST9=$(c rpc l2_getKarmaStatus "$FROM9")
[ "$(echo "$ST9" | jget feeState)" = premium ] && [ "$(echo "$ST9" | jget tier.name)" = none ]
check "l2_getKarmaStatus of dev account 9: premium, tier none" $? "$ST9"
R=$(timeout $((TX_TIMEOUT + 15)) "$CAST" send --private-key "$KEY9" --timeout "$TX_TIMEOUT" --gas-limit 21000 --gas-price 0 --priority-gas-price 0 "$FROM" --value 1 2>&1); rc=$?
[ $rc -ne 0 ] && echo "$R" | grep -q "holds no Karma"; check "free send without Karma is refused with what to do" $? "rc=$rc $R"
OUT=$(timeout $((TX_TIMEOUT + 15)) "$CAST" send --private-key "$KEY9" --timeout "$TX_TIMEOUT" --json \
  --gas-limit "$(( GL9 ))" --gas-price "$(( 2 * BASE9 + PRIO9 ))" --priority-gas-price "$(( PRIO9 ))" "$FROM" --value 1 2>&1)
[ "$(echo "$OUT" | jget status)" = 0x1 ] && [ "$(( $(echo "$OUT" | jget effectiveGasPrice) ))" -ge 12000000000 ]
check "premium send from the estimate's fields: status 1, paid >= 12 gwei" $? "$OUT"

finish
