//! Shards of a run (`run --partition hash:K/N` or `slice:K/N`, as cargo-nextest spells it): a
//! split of the selected rules that is the same for the same K/N and rule ids on every build
//! and platform, so that N CI runners each run a disjoint part and `merge` puts them together.
//!
//! A rule's cases derive from the run seed and its own id only (`seed::rule_seed`), so a rule
//! run in a shard sends what it sends in the full run. The response oracles (the rules that
//! judge every response of the run) are no one shard's: each shard runs them over its own
//! responses, and a merge joins their verdicts, which is the verdict over all the responses.

use serde::{Deserialize, Serialize};

/// How rules are dealt to the shards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scheme {
    /// By a fixed hash of the rule id: a rule stays in its shard when others are added.
    Hash,
    /// Round robin over the selected rules in catalogue order: the most even split.
    Slice,
}

/// One shard: `shard` of `of`, counted from 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Partition {
    pub scheme: Scheme,
    pub shard: u32,
    pub of: u32,
}

/// Shards a run may be split into: more than a CI matrix holds is a typo.
pub const MAX_SHARDS: u32 = 1024;

impl std::str::FromStr for Partition {
    type Err = String;

    fn from_str(text: &str) -> Result<Partition, String> {
        let wrong = || {
            format!(
                "--partition {text:?}: expected hash:K/N or slice:K/N with 1 <= K <= N <= {MAX_SHARDS} (e.g. hash:1/3)"
            )
        };
        let (scheme, shard) = text.split_once(':').ok_or_else(wrong)?;
        let scheme = match scheme {
            "hash" => Scheme::Hash,
            "slice" => Scheme::Slice,
            _ => return Err(wrong()),
        };
        let (shard, of) = shard.split_once('/').ok_or_else(wrong)?;
        let shard: u32 = shard.parse().map_err(|_| wrong())?;
        let of: u32 = of.parse().map_err(|_| wrong())?;
        if shard == 0 || shard > of || of > MAX_SHARDS {
            return Err(wrong());
        }
        Ok(Partition { scheme, shard, of })
    }
}

impl std::fmt::Display for Partition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let scheme = match self.scheme {
            Scheme::Hash => "hash",
            Scheme::Slice => "slice",
        };
        write!(f, "{scheme}:{}/{}", self.shard, self.of)
    }
}

impl Partition {
    /// The shard (from 1) a rule goes to: `position` is its place among the rules dealt (the
    /// selected rules, oracles left out, in catalogue order).
    pub fn shard_of(&self, position: usize, rule_id: &str) -> u32 {
        let of = u64::from(self.of.max(1));
        let slot = match self.scheme {
            // FNV-1a then SplitMix64: fixed functions, unlike std's RandomState; the second
            // spreads FNV's low bits, which a small N would otherwise read alone.
            Scheme::Hash => crate::seed::splitmix64(crate::seed::fnv1a(rule_id)) % of,
            Scheme::Slice => position as u64 % of,
        };
        slot as u32 + 1
    }

    /// Whether this shard runs the rule at `position` with id `rule_id`.
    pub fn takes(&self, position: usize, rule_id: &str) -> bool {
        self.shard_of(position, rule_id) == self.shard
    }

    /// The same split, shard `shard`.
    pub fn with_shard(&self, shard: u32) -> Partition {
        Partition { shard, ..*self }
    }
}

/// What a shard's report records: its partition, every rule the whole run selected (so that a
/// merge knows the full run's rules without the filter that chose them), and the rules every
/// shard runs (the response oracles).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardRecord {
    #[serde(flatten)]
    pub partition: Partition,
    /// `hash:2/3`, as the command line gives it.
    pub name: String,
    /// The ids of the rules the unsplit run selects, in catalogue order.
    pub selected: Vec<String>,
    /// The ids of the rules every shard runs, each over its own responses.
    pub every_shard: Vec<String>,
    /// The one invocation of the split run this shard is part of (`--invocation`): what tells
    /// today's shard 1 from yesterday's of the same seed and target. Empty in a report written
    /// before shards carried it, which `merge` refuses.
    #[serde(default)]
    pub invocation: String,
    /// SHA-256 of the options that change what is sent or judged (the Re-run line without
    /// `--partition`): shards of one run are run alike.
    #[serde(default)]
    pub options_sha256: String,
}

impl ShardRecord {
    /// The shard (from 1) each dealt rule of `selected` goes to, in order.
    pub fn deal(&self) -> Vec<(String, u32)> {
        self.selected
            .iter()
            .filter(|id| !self.every_shard.contains(id))
            .enumerate()
            .map(|(position, id)| (id.clone(), self.partition.shard_of(position, id)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints() {
        let p: Partition = "hash:2/3".parse().unwrap();
        assert_eq!((p.scheme, p.shard, p.of), (Scheme::Hash, 2, 3));
        assert_eq!(p.to_string(), "hash:2/3");
        assert_eq!(
            "slice:1/1".parse::<Partition>().unwrap().scheme,
            Scheme::Slice
        );
        for wrong in [
            "hash:0/3", "hash:4/3", "hash:1/0", "mod:1/3", "hash:1", "hash:a/3",
        ] {
            assert!(wrong.parse::<Partition>().is_err(), "{wrong}");
        }
    }

    #[test]
    fn shards_are_disjoint_and_cover_every_rule() {
        let ids: Vec<String> = (0..91).map(|n| format!("area/rule-{n}")).collect();
        for scheme in ["hash", "slice"] {
            let shards: Vec<Partition> = (1..=3)
                .map(|k| format!("{scheme}:{k}/3").parse().unwrap())
                .collect();
            for (position, id) in ids.iter().enumerate() {
                let taking = shards.iter().filter(|p| p.takes(position, id)).count();
                assert_eq!(taking, 1, "{scheme} {id}");
            }
            // Neither split leaves a shard nearly empty.
            for shard in &shards {
                let taken = ids.iter().enumerate().filter(|(n, id)| shard.takes(*n, id));
                assert!(taken.count() >= 20, "{shard}");
            }
        }
    }

    #[test]
    fn the_hash_is_pinned() {
        // Pinned: a changed hash would move rules between the shards of CI matrices already set up.
        let p: Partition = "hash:1/3".parse().unwrap();
        let dealt: Vec<u32> = ["auth/missing", "list-pets/ok", "get-pet/unknown"]
            .iter()
            .map(|id| p.shard_of(0, id))
            .collect();
        assert_eq!(dealt, PINNED);
    }

    const PINNED: [u32; 3] = [3, 1, 3];
}
