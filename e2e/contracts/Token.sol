// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// Minimal ERC-20 used by the l2node end-to-end suites and the load benchmark.
/// Compiled at test time by e2e/scripts/compile.mjs (solc-js, evmVersion paris: no PUSH0).
contract Token {
    string public constant name = "E2E Token";
    string public constant symbol = "E2E";
    uint8 public constant decimals = 18;
    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;

    event Transfer(address indexed from, address indexed to, uint256 value);

    constructor(uint256 supply) {
        totalSupply = supply;
        balanceOf[msg.sender] = supply;
        emit Transfer(address(0), msg.sender, supply);
    }

    function transfer(address to, uint256 value) external returns (bool) {
        uint256 bal = balanceOf[msg.sender];
        require(bal >= value, "insufficient balance");
        unchecked {
            balanceOf[msg.sender] = bal - value;
        }
        balanceOf[to] += value;
        emit Transfer(msg.sender, to, value);
        return true;
    }

    /// Always reverts with the reason string "nope" (revert-reason surfacing checks).
    function fail() external pure {
        revert("nope");
    }
}
