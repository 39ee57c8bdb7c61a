// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @title KarmaTiers
/// @notice The table that turns a Karma balance into a daily quota of free transactions.
/// Tiers are contiguous from 0 with inclusive bounds. Nodes apply an update from the next
/// epoch (quota window) on.
/// @dev The node reads this storage layout directly (slot 0: owner, slot 1: the tier array,
/// 4 slots per tier: minKarma, maxKarma, name, txPerEpoch); keep the order.
contract KarmaTiers {
    struct Tier {
        uint256 minKarma;
        uint256 maxKarma;
        string name;
        uint32 txPerEpoch;
    }

    address public owner;
    Tier[] private _tiers;

    /// @notice Most tiers: ids are uint8.
    uint256 public constant MAX_TIERS = 255;
    /// @notice Longest tier name in bytes.
    uint256 public constant MAX_NAME_LENGTH = 32;

    event TiersUpdated();
    event OwnershipTransferred(address indexed previousOwner, address indexed newOwner);

    error NotOwner();
    error ZeroAddress();
    error EmptyTiers();
    error TooManyTiers(uint256 count);
    error FirstTierMustStartAtZero(uint256 minKarma);
    error NonContiguousTiers(uint256 index, uint256 expectedMin, uint256 minKarma);
    error InvalidTierRange(uint256 index, uint256 minKarma, uint256 maxKarma);
    error InvalidTierName(uint256 index, uint256 length);
    error TierNotFound(uint8 id);

    modifier onlyOwner() {
        if (msg.sender != owner) revert NotOwner();
        _;
    }

    constructor(address owner_) {
        if (owner_ == address(0)) revert ZeroAddress();
        owner = owner_;
        emit OwnershipTransferred(address(0), owner_);
    }

    function transferOwnership(address newOwner) external onlyOwner {
        if (newOwner == address(0)) revert ZeroAddress();
        emit OwnershipTransferred(owner, newOwner);
        owner = newOwner;
    }

    /// @notice Replaces the tier table (owner only).
    function updateTiers(Tier[] calldata tiers) external onlyOwner {
        uint256 n = tiers.length;
        if (n == 0) revert EmptyTiers();
        if (n > MAX_TIERS) revert TooManyTiers(n);
        if (tiers[0].minKarma != 0) revert FirstTierMustStartAtZero(tiers[0].minKarma);
        for (uint256 i = 0; i < n; i++) {
            Tier calldata t = tiers[i];
            uint256 len = bytes(t.name).length;
            if (len == 0 || len > MAX_NAME_LENGTH) revert InvalidTierName(i, len);
            if (t.maxKarma < t.minKarma) revert InvalidTierRange(i, t.minKarma, t.maxKarma);
            if (i > 0) {
                uint256 prevMax = tiers[i - 1].maxKarma;
                if (prevMax == type(uint256).max || t.minKarma != prevMax + 1) {
                    revert NonContiguousTiers(i, prevMax == type(uint256).max ? prevMax : prevMax + 1, t.minKarma);
                }
            }
        }
        delete _tiers;
        for (uint256 i = 0; i < n; i++) {
            Tier storage s = _tiers.push();
            s.minKarma = tiers[i].minKarma;
            s.maxKarma = tiers[i].maxKarma;
            s.name = tiers[i].name;
            s.txPerEpoch = tiers[i].txPerEpoch;
        }
        emit TiersUpdated();
    }

    function getTierCount() external view returns (uint8) {
        return uint8(_tiers.length);
    }

    function getTierById(uint8 id) external view returns (Tier memory) {
        if (id >= _tiers.length) revert TierNotFound(id);
        return _tiers[id];
    }

    /// @notice The id of the tier whose range holds `balance` (the last tier above its max).
    function getTierIdByKarmaBalance(uint256 balance) external view returns (uint8) {
        uint256 lo = 0;
        uint256 hi = _tiers.length;
        // The last tier with minKarma <= balance; tier 0 starts at 0.
        while (hi - lo > 1) {
            uint256 mid = (lo + hi) / 2;
            if (_tiers[mid].minKarma <= balance) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        return uint8(lo);
    }
}
