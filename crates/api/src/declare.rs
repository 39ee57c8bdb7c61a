//! One declaration per JSON-RPC namespace: [`declare_api!`] expands each trait into the jsonrpsee
//! `#[rpc]` trait (the generated `*Server` / `*Client` traits, depending on the crate features)
//! and into a table of [`MethodSpec`]s that describes every method's parameters, derived from
//! the Rust argument names and types. The node names bad arguments from the tables, and tests
//! generate calls from them.

use alloy_primitives::{Address, Bytes, B256, U256, U64};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;

use crate::types::{
    BlockId, BlockNumberOrTag, BlockOverrides, Filter, Index, StateOverride, TransactionRequest,
};

/// What a parameter holds, to generate values for it (fuzzing) without matching on method names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ParamKind {
    /// A 20-byte address.
    Address,
    /// A 32-byte hash.
    Hash,
    /// A hex quantity (`U64`, `U256`, [`Index`]).
    Quantity,
    /// A block number or tag ([`BlockNumberOrTag`]).
    BlockTag,
    /// A block number, tag or hash object ([`BlockId`]).
    BlockId,
    /// A boolean.
    Bool,
    /// A call / transaction request object.
    Call,
    /// A log filter object.
    Filter,
    /// Hex bytes.
    Data,
    /// Reward percentiles of `eth_feeHistory`.
    Percentiles,
    /// A state override object.
    StateOverride,
    /// A block override object.
    BlockOverrides,
    /// A list of 32-byte storage keys.
    StorageKeys,
    /// A free-form string (the kind of `eth_subscribe`).
    Text,
    /// Any JSON value (the options of `eth_subscribe`).
    Json,
    /// The id `eth_subscribe` answered, as `eth_unsubscribe` takes it.
    SubscriptionId,
    /// geth's tracer options (`debug_trace*`).
    TracerOptions,
    /// Parity trace types (`trace_call`): a list of `trace`, `vmTrace`, `stateDiff`.
    TraceTypes,
    /// `eth_simulateV1`'s payload: blocks of calls with overrides.
    SimulatePayload,
}

/// A Rust type used as an RPC parameter: how it is described to users and what it holds.
pub trait Param: DeserializeOwned {
    /// The format, as completing "expected ..." in an invalid-params message.
    const EXPECTED: &'static str;
    /// What the parameter holds.
    const KIND: ParamKind;
    /// Whether the argument may be left out or `null` (only `Option<T>`).
    const OPTIONAL: bool = false;
}

macro_rules! params {
    ($($ty:ty => $kind:ident, $expected:expr;)*) => {
        $(
            impl Param for $ty {
                const EXPECTED: &'static str = $expected;
                const KIND: ParamKind = ParamKind::$kind;
            }
        )*
    };
}

const QUANTITY: &str = "a 0x-prefixed hex quantity";

params! {
    Address => Address, "a 20-byte address as 0x-prefixed hex";
    B256 => Hash, "a 32-byte hash as 0x-prefixed hex";
    U256 => Quantity, QUANTITY;
    U64 => Quantity, QUANTITY;
    Index => Quantity, QUANTITY;
    Bytes => Data, "0x-prefixed hex bytes";
    BlockId => BlockId,
        "a block number (hex), a tag (latest, pending, earliest, safe, finalized) or {\"blockHash\": ...}";
    BlockNumberOrTag => BlockTag,
        "a block number (hex) or a tag (latest, pending, earliest, safe, finalized)";
    TransactionRequest => Call,
        "a call object {from, to, gas, gasPrice | maxFeePerGas, value, input | data}";
    StateOverride => StateOverride,
        "an object of address -> {balance, nonce, code, state, stateDiff}";
    BlockOverrides => BlockOverrides, "an object {number, time, gasLimit, baseFee, ...}";
    Filter => Filter, "a filter object {fromBlock, toBlock, address, topics} or {blockHash, ...}";
    // `fullTransactions`, `l2admin_setKillSwitch`'s `on`, ...: a JSON boolean.
    bool => Bool, "a boolean (true or false)";
    // The one list of numbers: `eth_feeHistory`'s reward percentiles.
    Vec<f64> => Percentiles, "an increasing list of numbers between 0 and 100";
    // `eth_getProof`'s storage keys, in the short forms geth accepts.
    Vec<crate::types::JsonStorageKey> => StorageKeys, "a list of storage slots as hex, at most 32 bytes each";
    std::collections::BTreeMap<Address, Vec<crate::types::StorageSlot>> => Json,
        "an object of address -> list of storage slots";
    String => Text, "a string";
    Value => Json, "any JSON value";
    SubscriptionId => SubscriptionId, "a subscription id as returned by eth_subscribe";
    crate::types::StorageSlot => Hash, "a storage slot as hex, at most 32 bytes";
    Vec<crate::types::TraceType> => TraceTypes, "a list of trace types: trace, vmTrace, stateDiff";
    crate::types::GethDebugTracingOptions => TracerOptions,
        "tracer options {tracer, tracerConfig, timeout, disableStorage, enableMemory, ...}";
    crate::types::SimulatePayload => SimulatePayload,
        "a simulation {blockStateCalls: [{blockOverrides, stateOverrides, calls}], validation, traceTransfers, returnFullTransactions}";
    crate::types::PayloadAttributes => Json,
        "payload attributes {timestamp, prevRandao, suggestedFeeRecipient, withdrawals, parentBeaconBlockRoot}";
    Vec<Bytes> => Json, "a list of 0x-prefixed hex byte strings";
    crate::types::NumberOrHex => Quantity, "a JSON number or a hex quantity";
    crate::types::MineOptions => Json,
        "a timestamp (number or hex) or an object {timestamp, blocks}";
    crate::types::GethDebugTracingCallOptions => TracerOptions,
        "tracer options {tracer, tracerConfig, ..., stateOverrides, blockOverrides}";
}

impl<T: Param> Param for Option<T> {
    const EXPECTED: &'static str = T::EXPECTED;
    const KIND: ParamKind = T::KIND;
    const OPTIONAL: bool = true;
}

impl<T: Param> Param for Box<T> {
    const EXPECTED: &'static str = T::EXPECTED;
    const KIND: ParamKind = T::KIND;
    const OPTIONAL: bool = T::OPTIONAL;
}

/// The parameter of the unsubscribe method jsonrpsee generates for a subscription: a number or
/// a string, as jsonrpsee parses it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum SubscriptionId {
    /// A numeric id.
    Num(u64),
    /// A string id (l2node hands out 0x-prefixed hex).
    Str(String),
}

/// Whether `value` deserializes as `T`; what is wrong with it otherwise, in plain words
/// ([`plain_error`]).
pub fn check<T: DeserializeOwned>(value: &Value) -> Result<(), String> {
    T::deserialize(value)
        .map(|_| ())
        .map_err(|e| plain_error(&e))
}

/// A serde error as a person reads it: what was found (`got string "lol"`), a missing or
/// unknown field, or the value's own complaint (`invalid string length`), without serde's
/// "invalid type", "untagged enum" or "at line 1 column" (the caller adds what is expected).
pub fn plain_error(e: &serde_json::Error) -> String {
    let text = e.to_string();
    // serde_json appends the position in the input, meaningless for a parameter.
    let text = match text.rfind(" at line ") {
        Some(i) if text[i..].contains(" column ") => &text[..i],
        _ => text.as_str(),
    };
    let found = |rest: &str| {
        let got = rest.split(", expected").next().unwrap_or(rest);
        format!("got {}", got.replace('`', ""))
    };
    if let Some(rest) = text
        .strip_prefix("invalid type: ")
        .or_else(|| text.strip_prefix("invalid value: "))
    {
        found(rest)
    } else if text.contains("did not match any variant") {
        "not a value of this shape".to_owned()
    } else if text.starts_with("unknown field") || text.starts_with("unknown variant") {
        // Keep the name that is wrong; the list of the right ones follows as "expected".
        text.split(", expected")
            .next()
            .unwrap_or(text)
            .replace('`', "\"")
    } else {
        text.replace('`', "\"")
    }
}

/// One positional parameter of a method.
#[derive(Debug, Clone, Copy)]
pub struct ParamSpec {
    /// The argument's name in camelCase (the Rust argument name, `full_transactions` ->
    /// `fullTransactions`).
    pub name: &'static str,
    /// The format, as completing "expected ...".
    pub expected: &'static str,
    /// Whether the argument may be left out or `null`.
    pub optional: bool,
    /// Whether a JSON value is acceptable for this argument (the serde error if not).
    pub check: fn(&Value) -> Result<(), String>,
    /// What the parameter holds.
    pub kind: ParamKind,
}

impl ParamSpec {
    /// The parameter `name` of Rust type `T`.
    pub const fn of<T: Param>(name: &'static str) -> Self {
        Self {
            name,
            expected: T::EXPECTED,
            optional: T::OPTIONAL,
            check: check::<T>,
            kind: T::KIND,
        }
    }
}

/// How jsonrpsee serves a method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MethodKind {
    /// A method call: one response.
    Method,
    /// A subscription (WebSocket only): the answer, also an error, goes out through the
    /// subscription sink, not as the method's response.
    Subscription,
    /// The method that ends a subscription.
    Unsubscribe,
}

/// One JSON-RPC method and its positional parameters.
#[derive(Debug, Clone, Copy)]
pub struct MethodSpec {
    /// The full method name, e.g. `eth_getBalance`.
    pub name: &'static str,
    /// How jsonrpsee serves it.
    pub kind: MethodKind,
    /// The parameters in order.
    pub params: &'static [ParamSpec],
}

/// Every method of every namespace.
pub fn methods() -> impl Iterator<Item = &'static MethodSpec> {
    crate::METHODS.iter().flat_map(|table| table.iter())
}

/// The method called `name`, if l2node serves it.
pub fn find_method(name: &str) -> Option<&'static MethodSpec> {
    use std::collections::HashMap;
    use std::sync::OnceLock;
    static BY_NAME: OnceLock<HashMap<&'static str, &'static MethodSpec>> = OnceLock::new();
    BY_NAME
        .get_or_init(|| methods().map(|m| (m.name, m)).collect())
        .get(name)
        .copied()
}

/// Length of the camelCase form of the snake_case `name`.
#[doc(hidden)]
pub(crate) const fn camel_len(name: &str) -> usize {
    let b = name.as_bytes();
    let (mut i, mut n) = (0, 0);
    while i < b.len() {
        if b[i] != b'_' {
            n += 1;
        }
        i += 1;
    }
    n
}

/// The camelCase form of the snake_case `name` (`N` = [`camel_len`]).
#[doc(hidden)]
pub(crate) const fn camel<const N: usize>(name: &str) -> [u8; N] {
    let b = name.as_bytes();
    let mut out = [0u8; N];
    let (mut i, mut j, mut upper) = (0, 0, false);
    while i < b.len() {
        if b[i] == b'_' {
            upper = j > 0;
        } else {
            out[j] = if upper {
                b[i].to_ascii_uppercase()
            } else {
                b[i]
            };
            upper = false;
            j += 1;
        }
        i += 1;
    }
    out
}

/// Implements every generated `*Server` trait with panicking methods, so the tests can list the
/// methods jsonrpsee registers.
#[cfg(all(test, feature = "server"))]
#[derive(Debug, Clone, Copy)]
pub(crate) struct Dummy;

/// Declares the RPC namespaces, each once:
///
/// ```text
/// declare_api! {
///     #[cfg_attr(all(feature = "server", feature = "client"), rpc(server, client))]
///     #[cfg_attr(all(feature = "server", not(feature = "client")), rpc(server))]
///     #[cfg_attr(all(not(feature = "server"), feature = "client"), rpc(client))]
///     traits:
///
///     /// The `net_` namespace.
///     #[table(NET_METHODS, server = NetApiServer)]
///     pub trait NetApi {
///         /// Network id (the chain id, decimal string).
///         #[method(name = "net_version")]
///         fn version(&self) -> RpcResult<String>;
///     }
///     // more traits
/// }
/// ```
///
/// expands to
/// - each trait under the three jsonrpsee attributes, so jsonrpsee generates `NetApiServer`
///   and/or `NetApiClient` as the crate features `server` and `client` are on (no trait without
///   either). The attributes are written by the caller, not by this macro, because the code
///   jsonrpsee generates takes the hygiene of its attribute and refers to the caller's `self`
///   and argument names; for the same reason the method names are full (`net_version`), not
///   given with a `namespace` argument;
/// - `pub const NET_METHODS: &[MethodSpec]`: one entry per method plus one per subscription's
///   unsubscribe method, with the parameters named (camelCase) and described ([`Param`]) by the
///   Rust arguments;
/// - `pub const METHODS: &[&[MethodSpec]]`: all the tables;
/// - in tests, an impl of `NetApiServer` (the name jsonrpsee generates, given as `server`) for
///   `Dummy`, and `dummy_module()` merging all of them, to check the tables against jsonrpsee.
///
/// Methods are `#[method(name = "...")]` (or `#[method(name = "...", with_extensions)]`, whose
/// server method also takes the call's extensions) or `#[subscription(name = "..." => "...",
/// unsubscribe = "...", item = ...)]`, `async` or not, take `&self` and have doc comments and no
/// other attributes.
macro_rules! declare_api {
    // ---- normalize each method to `{ name kind [unsubscribe?] [sink param] [async?] fn (args) ret }`
    (@norm $cont:tt [$($acc:tt)*]) => {
        declare_api!($cont [$($acc)*]);
    };
    (@norm $cont:tt [$($acc:tt)*]
        $(#[doc = $doc:literal])*
        #[method(name = $name:literal, with_extensions)]
        $($rest:tt)*
    ) => {
        declare_api!(@sig $cont [$($acc)*]
            { $name Method [] [_: &::jsonrpsee::Extensions,] } $($rest)*);
    };
    (@norm $cont:tt [$($acc:tt)*]
        $(#[doc = $doc:literal])*
        #[method(name = $name:literal $(, $($opt:tt)*)?)]
        $($rest:tt)*
    ) => {
        declare_api!(@sig $cont [$($acc)*] { $name Method [] [] } $($rest)*);
    };
    (@norm $cont:tt [$($acc:tt)*]
        $(#[doc = $doc:literal])*
        #[subscription(
            name = $name:literal => $notif:literal,
            unsubscribe = $unsub:literal,
            item = $item:ty $(,)?
        )]
        $($rest:tt)*
    ) => {
        declare_api!(@sig $cont [$($acc)*]
            { $name Subscription [$unsub] [_: ::jsonrpsee::PendingSubscriptionSink,] } $($rest)*);
    };
    (@sig $cont:tt [$($acc:tt)*] { $($head:tt)* }
        async fn $f:ident(&self $(, $arg:ident : $ty:ty)* $(,)?) -> $ret:ty;
        $($rest:tt)*
    ) => {
        declare_api!(@norm $cont
            [$($acc)* { $($head)* [async] $f ($($arg: $ty),*) $ret }] $($rest)*);
    };
    (@sig $cont:tt [$($acc:tt)*] { $($head:tt)* }
        fn $f:ident(&self $(, $arg:ident : $ty:ty)* $(,)?) -> $ret:ty;
        $($rest:tt)*
    ) => {
        declare_api!(@norm $cont [$($acc)* { $($head)* [] $f ($($arg: $ty),*) $ret }] $($rest)*);
    };

    // ---- the table of one namespace
    ((@table $table:ident $trait_name:ident) [$(
        { $name:literal $kind:ident [$($unsub:literal)?] [$($sink:tt)*] [$($async:tt)?]
          $f:ident ($($arg:ident : $ty:ty),*) $ret:ty }
    )*]) => {
        #[doc = concat!(
            "The methods of [`", stringify!($trait_name), "`] and their parameters."
        )]
        pub const $table: &[$crate::MethodSpec] = &[$(
            $crate::MethodSpec {
                name: $name,
                kind: $crate::MethodKind::$kind,
                params: &[$($crate::ParamSpec::of::<$ty>({
                    const SNAKE: &str = stringify!($arg);
                    const CAMEL: [u8; $crate::declare::camel_len(SNAKE)] =
                        $crate::declare::camel(SNAKE);
                    match ::core::str::from_utf8(&CAMEL) {
                        Ok(name) => name,
                        Err(_) => panic!("argument names are ASCII"),
                    }
                })),*],
            },
            $($crate::MethodSpec {
                name: $unsub,
                kind: $crate::MethodKind::Unsubscribe,
                params: &[$crate::ParamSpec::of::<$crate::SubscriptionId>("subscriptionId")],
            },)?
        )*];
    };

    // ---- a panicking implementation of one `*Server` trait, for the tests
    ((@dummy $server:ident) [$(
        { $name:literal $kind:ident [$($unsub:literal)?] [$($sink:tt)*] [$($async:tt)?]
          $f:ident ($($arg:ident : $ty:ty),*) $ret:ty }
    )*]) => {
        #[cfg(all(test, feature = "server"))]
        #[::jsonrpsee::core::async_trait]
        impl $server for $crate::declare::Dummy {
            $($($async)? fn $f(&self, $($sink)* $(_: $ty),*) -> $ret {
                unimplemented!()
            })*
        }
    };

    // ---- the public form: jsonrpsee's attributes, then every namespace, once
    (
        #$both:tt
        #$server_only:tt
        #$client_only:tt
        traits:
        $(
            $(#[doc = $tdoc:literal])*
            #[table($table:ident, server = $server:ident)]
            pub trait $trait_name:ident { $($body:tt)* }
        )*
    ) => {
        $(
            $(#[doc = $tdoc])*
            #[cfg(any(feature = "server", feature = "client"))]
            #$both
            #$server_only
            #$client_only
            pub trait $trait_name { $($body)* }

            declare_api!(@norm (@table $table $trait_name) [] $($body)*);
            declare_api!(@norm (@dummy $server) [] $($body)*);
        )*

        /// The method tables of all namespaces.
        pub const METHODS: &[&[$crate::MethodSpec]] = &[$($table),*];

        /// One module with every method jsonrpsee generates, served by `Dummy`.
        #[cfg(all(test, feature = "server"))]
        pub(crate) fn dummy_module() -> ::jsonrpsee::RpcModule<()> {
            let mut module = ::jsonrpsee::RpcModule::new(());
            $(
                module
                    .merge(<$crate::declare::Dummy as $server>::into_rpc($crate::declare::Dummy))
                    .expect("method names are unique");
            )*
            module
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_errors_read_as_plain_words() {
        let plain =
            |v: serde_json::Value, check: fn(&Value) -> Result<(), String>| check(&v).unwrap_err();
        assert_eq!(
            plain(serde_json::json!(5), check::<String>),
            "got integer 5"
        );
        assert_eq!(
            plain(serde_json::json!(true), check::<SubscriptionId>),
            "not a value of this shape"
        );
        for msg in [
            plain(serde_json::json!({"fromBlock": []}), check::<Filter>),
            plain(serde_json::json!({"to": 5}), check::<TransactionRequest>),
            plain(
                serde_json::json!([1]),
                check::<Vec<crate::types::TraceType>>,
            ),
        ] {
            for leak in ["invalid type", "untagged", "at line", "`"] {
                assert!(!msg.contains(leak), "{msg}");
            }
        }
    }

    #[test]
    fn camel_case_of_snake_case() {
        const A: [u8; camel_len("full_transactions")] = camel("full_transactions");
        assert_eq!(&A, b"fullTransactions");
        const B: [u8; camel_len("block")] = camel("block");
        assert_eq!(&B, b"block");
    }

    #[test]
    fn options_are_optional_and_keep_the_inner_description() {
        let p = ParamSpec::of::<Option<Box<BlockOverrides>>>("blockOverrides");
        assert!(p.optional);
        assert_eq!(p.kind, ParamKind::BlockOverrides);
        assert_eq!(p.expected, BlockOverrides::EXPECTED);
        assert!((p.check)(&serde_json::json!({"number": "0x1"})).is_ok());
        assert!((p.check)(&serde_json::json!(null)).is_ok());
        assert!((p.check)(&serde_json::json!(7)).is_err());
        assert!(!ParamSpec::of::<Address>("address").optional);
    }

    #[cfg(feature = "server")]
    #[test]
    fn every_method_jsonrpsee_registers_is_in_the_tables_exactly_once() {
        let mut registered: Vec<&str> = crate::dummy_module().method_names().collect();
        registered.sort_unstable();
        let mut tabled: Vec<&str> = methods().map(|m| m.name).collect();
        tabled.sort_unstable();
        // Sanity: every namespace, the subscription and its unsubscribe method are there.
        for name in [
            "eth_getBalance",
            "eth_subscribe",
            "eth_unsubscribe",
            "net_version",
            "web3_sha3",
            "txpool_content",
        ] {
            assert!(registered.contains(&name), "{name} not registered");
        }
        assert_eq!(tabled, registered);
    }

    #[test]
    fn parameters_are_named_in_camel_case() {
        let m = find_method("eth_getBlockByNumber").unwrap();
        let names: Vec<_> = m.params.iter().map(|p| p.name).collect();
        assert_eq!(names, ["block", "fullTransactions"]);
        let call = find_method("eth_call").unwrap();
        assert_eq!(call.params[2].name, "stateOverrides");
        assert!(call.params[2].optional && !call.params[0].optional);
        assert!(find_method("eth_notAMethod").is_none());
        assert_eq!(m.kind, MethodKind::Method);
        let sub = find_method("eth_subscribe").unwrap();
        assert_eq!(sub.kind, MethodKind::Subscription);
        assert_eq!(sub.params[1].kind, ParamKind::Json);
        assert_eq!(
            find_method("eth_unsubscribe").unwrap().kind,
            MethodKind::Unsubscribe
        );
    }
}
