// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @title Karma
/// @notice The network's soulbound reputation token: an ERC-20 that cannot be transferred or
/// approved. Operators mint it; slashers burn part of a spammer's balance (the RLN penalty),
/// which every node turns into a deny-list entry through the AccountSlashed event.
/// @dev The node reads this storage layout directly (slot 0: balances, 1: total supply,
/// 2: owner, 3: operators, 4: slashers); keep the order of the state variables.
contract Karma {
    mapping(address => uint256) private _balances;
    uint256 private _totalSupply;
    address public owner;
    mapping(address => bool) public isOperator;
    mapping(address => bool) public isSlasher;

    /// @notice The least a slash burns (unless the balance is smaller).
    uint256 public constant MIN_SLASH = 1 ether;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);
    event AccountSlashed(address indexed account, uint256 amount);
    event OperatorSet(address indexed account, bool enabled);
    event SlasherSet(address indexed account, bool enabled);
    event OwnershipTransferred(address indexed previousOwner, address indexed newOwner);

    error KarmaIsSoulbound();
    error NotOwner();
    error NotOperator();
    error NotSlasher();
    error ZeroAddress();

    modifier onlyOwner() {
        if (msg.sender != owner) revert NotOwner();
        _;
    }

    constructor(address owner_) {
        if (owner_ == address(0)) revert ZeroAddress();
        owner = owner_;
        emit OwnershipTransferred(address(0), owner_);
    }

    function name() external pure returns (string memory) {
        return "Karma";
    }

    function symbol() external pure returns (string memory) {
        return "KARMA";
    }

    function decimals() external pure returns (uint8) {
        return 18;
    }

    function totalSupply() external view returns (uint256) {
        return _totalSupply;
    }

    function balanceOf(address account) external view returns (uint256) {
        return _balances[account];
    }

    function allowance(address, address) external pure returns (uint256) {
        return 0;
    }

    function transfer(address, uint256) external pure returns (bool) {
        revert KarmaIsSoulbound();
    }

    function approve(address, uint256) external pure returns (bool) {
        revert KarmaIsSoulbound();
    }

    function transferFrom(address, address, uint256) external pure returns (bool) {
        revert KarmaIsSoulbound();
    }

    function transferOwnership(address newOwner) external onlyOwner {
        if (newOwner == address(0)) revert ZeroAddress();
        emit OwnershipTransferred(owner, newOwner);
        owner = newOwner;
    }

    function setOperator(address account, bool enabled) external onlyOwner {
        isOperator[account] = enabled;
        emit OperatorSet(account, enabled);
    }

    function setSlasher(address account, bool enabled) external onlyOwner {
        isSlasher[account] = enabled;
        emit SlasherSet(account, enabled);
    }

    /// @notice Mints `amount` to `to` (operators only).
    function mint(address to, uint256 amount) external {
        if (!isOperator[msg.sender]) revert NotOperator();
        if (to == address(0)) revert ZeroAddress();
        _totalSupply += amount;
        _balances[to] += amount;
        emit Transfer(address(0), to, amount);
    }

    /// @notice Burns half of `account`'s balance, at least 1 KARMA, or all of a smaller
    /// balance (slashers only), and reports the violation. An account without Karma is
    /// reported too (amount 0): the deny-list entry is the penalty that matters on chain.
    function slash(address account) external returns (uint256 amount) {
        if (!isSlasher[msg.sender]) revert NotSlasher();
        uint256 balance = _balances[account];
        amount = balance / 2;
        if (amount < MIN_SLASH) {
            amount = balance < MIN_SLASH ? balance : MIN_SLASH;
        }
        _balances[account] = balance - amount;
        _totalSupply -= amount;
        emit Transfer(account, address(0), amount);
        emit AccountSlashed(account, amount);
    }
}
