//! Document-at-a-time evaluation of any query tree: each node is an iterator over matching
//! DIDs in increasing order that can `advance` to a target and score its current document.
//! This is the exhaustive evaluator (every match is visited); the pruned evaluators for flat
//! conjunctions and disjunctions are in `pruned.rs`, and must agree with it.

use super::bm25::Bm25;
use super::doc_list::DocList;
use super::phrase::PhraseNode;
use super::range_node::RangeNode;
use super::stats::SearchStats;
use super::term_cursor::{TermCursor, NO_MORE_DOCS};
use crate::IndexError;

/// A node of a compiled query.
// Terms are the leaves every step goes through: kept inline, not boxed.
#[allow(clippy::large_enum_variant)]
pub enum Node<'a> {
    /// Matches nothing.
    Empty,
    /// One term.
    Term(TermCursor<'a>),
    /// Every child matches (children sorted rarest first).
    And(Vec<Node<'a>>),
    /// At least one child matches; the current DID (the children's least) is cached.
    Or(Vec<Node<'a>>, u32),
    /// `required` matches; `optional` adds its score where it matches too.
    ReqOpt(Box<Node<'a>>, Box<Node<'a>>),
    /// `inner` matches and `excluded` does not.
    Exclude(Box<Node<'a>>, Box<Node<'a>>),
    /// A phrase.
    Phrase(Box<PhraseNode<'a>>),
    /// Documents listed in advance (all of them), each with one score.
    Docs(DocList),
    /// A range's documents, found from columns as the node advances, each with one score.
    Range(Box<RangeNode<'a>>),
    /// At least one child matches; scored by the best child plus the tie breaker times the
    /// others (Lucene's `DisjunctionMaxQuery`). The children are kept as an `Or` node.
    DisMax(Box<Node<'a>>, f32),
}

impl<'a> Node<'a> {
    /// A conjunction of `children` (simplified: empty if any child is, rarest first).
    pub fn and(mut children: Vec<Node<'a>>) -> Node<'a> {
        if children.is_empty() || children.iter().any(|c| matches!(c, Node::Empty)) {
            return Node::Empty;
        }
        if children.len() == 1 {
            return children.pop().expect("one");
        }
        children.sort_by_key(|c| c.cost());
        Node::And(children)
    }

    /// A disjunction of `children` (empty children dropped).
    pub fn or(children: Vec<Node<'a>>) -> Node<'a> {
        let mut children: Vec<Node<'a>> = children
            .into_iter()
            .filter(|c| !matches!(c, Node::Empty))
            .collect();
        match children.len() {
            0 => Node::Empty,
            1 => children.pop().expect("one"),
            _ => Node::Or(children, 0),
        }
    }

    /// `required` scored with `optional` added where it matches.
    pub fn req_opt(required: Node<'a>, optional: Node<'a>) -> Node<'a> {
        match (required, optional) {
            (Node::Empty, _) => Node::Empty,
            (required, Node::Empty) => required,
            (required, optional) => Node::ReqOpt(Box::new(required), Box::new(optional)),
        }
    }

    /// The best of `children` plus `tie_breaker` times the others (empty children dropped).
    pub fn dis_max(children: Vec<Node<'a>>, tie_breaker: f32) -> Node<'a> {
        match Node::or(children) {
            or @ Node::Or(..) => Node::DisMax(Box::new(or), tie_breaker),
            single => single,
        }
    }

    /// `inner` without the documents of `excluded`.
    pub fn exclude(inner: Node<'a>, excluded: Node<'a>) -> Node<'a> {
        match (inner, excluded) {
            (Node::Empty, _) => Node::Empty,
            (inner, Node::Empty) => inner,
            (inner, excluded) => Node::Exclude(Box::new(inner), Box::new(excluded)),
        }
    }

    /// An upper bound on the number of matches (to order conjunctions).
    pub fn cost(&self) -> u64 {
        match self {
            Node::Empty => 0,
            Node::Term(t) => u64::from(t.doc_freq()),
            Node::And(c) => c.iter().map(Node::cost).min().unwrap_or(0),
            Node::Or(c, _) => c.iter().map(Node::cost).sum(),
            Node::ReqOpt(r, _) => r.cost(),
            Node::Exclude(i, _) => i.cost(),
            Node::Phrase(p) => p.cost(),
            Node::Docs(d) => d.len(),
            Node::Range(r) => r.cost(),
            Node::DisMax(or, _) => or.cost(),
        }
    }

    /// The decoding work of the node's cursors so far.
    pub fn stats(&self) -> SearchStats {
        let mut stats = SearchStats::default();
        match self {
            Node::Empty | Node::Docs(_) | Node::Range(_) => {}
            Node::Term(t) => stats = t.stats(),
            Node::Phrase(p) => stats = p.stats(),
            Node::And(c) | Node::Or(c, _) => c.iter().for_each(|c| stats += c.stats()),
            Node::ReqOpt(a, b) | Node::Exclude(a, b) => {
                stats += a.stats();
                stats += b.stats();
            }
            Node::DisMax(or, _) => stats = or.stats(),
        }
        stats
    }

    /// The current DID ([`NO_MORE_DOCS`] when exhausted). Valid after [`Node::start`].
    pub fn doc(&self) -> u32 {
        match self {
            Node::Empty => NO_MORE_DOCS,
            Node::Term(t) => t.doc(),
            Node::And(c) => c[0].doc(),
            Node::Or(_, doc) => *doc,
            Node::ReqOpt(r, _) => r.doc(),
            Node::Exclude(i, _) => i.doc(),
            Node::Phrase(p) => p.doc(),
            Node::Docs(d) => d.doc(),
            Node::Range(r) => r.doc(),
            Node::DisMax(or, _) => or.doc(),
        }
    }

    /// Positions the node on its first match.
    pub fn start(&mut self) -> Result<u32, IndexError> {
        match self {
            Node::Empty | Node::Term(_) | Node::Docs(_) | Node::Range(_) => Ok(self.doc()),
            Node::Phrase(p) => p.start(),
            Node::And(children) => {
                for child in children.iter_mut() {
                    child.start()?;
                }
                let target = children[0].doc();
                self.align(target)
            }
            Node::Or(children, doc) => {
                let mut least = NO_MORE_DOCS;
                for child in children.iter_mut() {
                    least = least.min(child.start()?);
                }
                *doc = least;
                Ok(least)
            }
            Node::ReqOpt(required, optional) => {
                optional.start()?;
                required.start()
            }
            Node::Exclude(inner, excluded) => {
                excluded.start()?;
                let doc = inner.start()?;
                self.skip_excluded(doc)
            }
            Node::DisMax(or, _) => or.start(),
        }
    }

    /// Moves to the next match.
    pub fn next_doc(&mut self) -> Result<u32, IndexError> {
        let doc = self.doc();
        if doc == NO_MORE_DOCS {
            return Ok(NO_MORE_DOCS);
        }
        self.advance(doc + 1)
    }

    /// Moves to the first match at or after `target`.
    pub fn advance(&mut self, target: u32) -> Result<u32, IndexError> {
        match self {
            Node::Empty => Ok(NO_MORE_DOCS),
            Node::Term(t) => t.advance(target),
            Node::Phrase(p) => p.advance(target),
            Node::Docs(d) => Ok(d.advance(target)),
            Node::Range(r) => Ok(r.advance(target)),
            Node::And(_) => self.align(target),
            Node::Or(children, doc) => {
                let mut least = NO_MORE_DOCS;
                for child in children.iter_mut() {
                    let d = if child.doc() < target {
                        child.advance(target)?
                    } else {
                        child.doc()
                    };
                    least = least.min(d);
                }
                *doc = least;
                Ok(least)
            }
            Node::ReqOpt(required, _) => required.advance(target),
            Node::Exclude(inner, _) => {
                let doc = inner.advance(target)?;
                self.skip_excluded(doc)
            }
            Node::DisMax(or, _) => or.advance(target),
        }
    }

    /// For `And`: leapfrog until every child is on the same DID, at least `target`.
    fn align(&mut self, target: u32) -> Result<u32, IndexError> {
        let Node::And(children) = self else {
            unreachable!("align is for conjunctions")
        };
        let mut candidate = children[0].advance(target)?;
        'search: loop {
            if candidate == NO_MORE_DOCS {
                return Ok(NO_MORE_DOCS);
            }
            for i in 1..children.len() {
                let doc = children[i].advance(candidate)?;
                if doc > candidate {
                    candidate = children[0].advance(doc)?;
                    continue 'search;
                }
            }
            return Ok(candidate);
        }
    }

    /// For `Exclude`: from `doc`, moves past documents the excluded node matches.
    fn skip_excluded(&mut self, mut doc: u32) -> Result<u32, IndexError> {
        let Node::Exclude(inner, excluded) = self else {
            unreachable!("skip_excluded is for exclusions")
        };
        while doc != NO_MORE_DOCS {
            if excluded.doc() < doc {
                excluded.advance(doc)?;
            }
            if excluded.doc() != doc {
                return Ok(doc);
            }
            doc = inner.next_doc()?;
        }
        Ok(NO_MORE_DOCS)
    }

    /// Score of the current document (which the node matches).
    pub fn score(&mut self, bm25: &Bm25) -> Result<f32, IndexError> {
        match self {
            Node::Empty => Ok(0.0),
            Node::Term(t) => t.score(bm25),
            Node::Phrase(p) => p.score(bm25),
            Node::Docs(d) => Ok(d.score()),
            Node::Range(r) => Ok(r.score()),
            Node::And(children) => {
                let mut sum = 0f64;
                for child in children.iter_mut() {
                    sum += f64::from(child.score(bm25)?);
                }
                Ok(sum as f32)
            }
            Node::Or(children, doc) => {
                let doc = *doc;
                let mut sum = 0f64;
                for child in children.iter_mut() {
                    if child.doc() == doc {
                        sum += f64::from(child.score(bm25)?);
                    }
                }
                Ok(sum as f32)
            }
            Node::ReqOpt(required, optional) => {
                let doc = required.doc();
                let mut score = required.score(bm25)?;
                if optional.doc() < doc {
                    optional.advance(doc)?;
                }
                if optional.doc() == doc {
                    score += optional.score(bm25)?;
                }
                Ok(score)
            }
            Node::Exclude(inner, _) => inner.score(bm25),
            Node::DisMax(or, tie_breaker) => {
                let Node::Or(children, doc) = or.as_mut() else {
                    return or.score(bm25);
                };
                let doc = *doc;
                // Lucene's `DisjunctionMaxScorer.score`, to the bit.
                let (mut best, mut others) = (0f32, 0f64);
                for child in children.iter_mut() {
                    if child.doc() == doc {
                        let score = child.score(bm25)?;
                        if score >= best {
                            others += f64::from(best);
                            best = score;
                        } else {
                            others += f64::from(score);
                        }
                    }
                }
                Ok((f64::from(best) + others * f64::from(*tie_breaker)) as f32)
            }
        }
    }
}
