//! Group life by paths of empty cells, shared by Lifeline and Square Lifeline.

use crate::bitset::CellSet;
use crate::board::Board;

/// The union of every group of `stones` from which no path of `empty` cells leads to another
/// group of `stones` (RULES.md sections 2 and 3: such a group is dead).
///
/// Reachability through empty cells is symmetric, so when one group reaches another, every
/// group touching the same empty region is alive and all of them are settled at once.
pub fn dead_groups(board: &Board, stones: CellSet, empty: CellSet) -> CellSet {
    let mut alive = CellSet::EMPTY;
    let mut unsettled = stones;
    while let Some(s) = unsettled.first() {
        let group = board.flood(&CellSet::single(s), &stones);
        let reach = board.flood(&(board.dilate(&group) & empty), &empty);
        let touched = board.dilate(&reach) & stones;
        if (touched - group).is_empty() {
            unsettled -= group;
        } else {
            let connected = board.flood(&touched, &stones) | group;
            alive |= connected;
            unsettled -= connected;
        }
    }
    stones - alive
}

/// Whether `group` (a whole group of `stones`) reaches another group of `stones` through
/// `empty` cells.
#[inline]
pub fn reaches_friend(board: &Board, group: CellSet, stones: CellSet, empty: CellSet) -> bool {
    reaches_friend_from(board, group, board.dilate(&group), stones, empty)
}

/// [`reaches_friend`] given the group's [`Board::dilate`] `around`.
#[inline]
pub fn reaches_friend_from(
    board: &Board,
    group: CellSet,
    around: CellSet,
    stones: CellSet,
    empty: CellSet,
) -> bool {
    let start = around & empty;
    // Most living groups have a friend two steps away: skip the flood for them.
    if !((board.dilate(&start) & stones) - group).is_empty() {
        return true;
    }
    let (_, around_reach) = board.flood_and_dilate(&start, &empty);
    !((around_reach & stones) - group).is_empty()
}

/// The union of the groups of `stones` that meet `candidates` and are dead (no path of `empty`
/// cells to another group of `stones`).
#[inline]
pub fn dead_among(board: &Board, candidates: CellSet, stones: CellSet, empty: CellSet) -> CellSet {
    let mut dead = CellSet::EMPTY;
    let mut todo = candidates & stones;
    while let Some(s) = todo.first() {
        let (group, around) = group_and_border(board, s, stones);
        todo -= group;
        if !reaches_friend_from(board, group, around, stones, empty) {
            dead |= group;
        }
    }
    dead
}

/// The group of `stones` holding the stone `s`, and its [`Board::dilate`].
#[inline]
pub fn group_and_border(board: &Board, s: usize, stones: CellSet) -> (CellSet, CellSet) {
    let adjacent = *board.adjacent(s as u16);
    if adjacent.intersects(&stones) {
        board.flood_and_dilate(&CellSet::single(s), &stones)
    } else {
        // A stone with no friendly neighbour is a group of its own: no flood needed.
        (CellSet::single(s), adjacent | CellSet::single(s))
    }
}

/// The stones of `stones` whose group may have died when the empty cell `x` of the empty region
/// `region` was filled, in a position where every group was alive before (the caller then runs
/// [`dead_among`] on them). `border` is `board.dilate(&region)`; `empty` is the empty cells with
/// `x` filled; `stones` holds `x` when it is the filler's colour. `one_piece` tells that the rest
/// of the region is known to stay connected (it saves a flood).
///
/// Life depends only on the regions a group touches, and only `region` changed: it became the
/// pieces of `region - x`. Groups that do not touch it keep their status. A piece touched by two
/// or more groups keeps every group touching it alive, so only the groups that are alone in
/// every piece they touch, or that touched the region only at `x`, are suspects.
#[inline]
pub fn fill_suspects(
    board: &Board,
    x: usize,
    region: CellSet,
    border: &CellSet,
    stones: CellSet,
    empty: CellSet,
    one_piece: bool,
) -> CellSet {
    let mut suspects = *border & stones;
    let mut todo = *board.adjacent(x as u16) & empty;
    while let Some(o) = todo.first() {
        let (piece, around) = if one_piece {
            let piece = region - CellSet::single(x);
            (piece, board.dilate(&piece))
        } else {
            board.flood_and_dilate(&CellSet::single(o), &empty)
        };
        todo -= piece;
        let touch = around & stones;
        // Start from the filler's own stone when it is in `stones`: its group touches every
        // piece, so it is the one to rule out first.
        let seed = if touch.contains(x) {
            Some(x)
        } else {
            touch.first()
        };
        if let Some(s) = seed {
            let (group, _) = group_and_border(board, s, stones);
            if !(touch - group).is_empty() {
                suspects -= touch | group;
            }
        }
    }
    suspects
}

/// Groups of `stones` as separate sets (for tests and tools; allocates).
pub fn groups(board: &Board, stones: CellSet) -> Vec<CellSet> {
    let mut out = Vec::new();
    let mut rest = stones;
    while let Some(s) = rest.first() {
        let g = board.flood(&CellSet::single(s), &stones);
        rest -= g;
        out.push(g);
    }
    out
}

/// Number of groups (maximal connected subsets) of `set`.
#[inline]
pub fn count_groups(board: &Board, set: CellSet) -> u32 {
    let mut n = 0;
    let mut rest = set;
    while let Some(s) = rest.first() {
        rest -= board.flood(&CellSet::single(s), &set);
        n += 1;
    }
    n
}

/// The union of the territories (maximal connected sets of empty cells) owned by the player
/// whose stones are `mine`: those touching at least one of `mine` and none of `theirs`
/// (RULES.md section 1; a territory touching no stone is owned by nobody).
#[inline]
pub fn owned_territory(board: &Board, mine: CellSet, theirs: CellSet) -> CellSet {
    let empty = *board.on_board() - mine - theirs;
    let mut owned = CellSet::EMPTY;
    // Only regions touching `mine` can be owned by it.
    let mut todo = board.dilate(&mine) & empty;
    while let Some(s) = todo.first() {
        let region = board.flood(&CellSet::single(s), &empty);
        todo -= region;
        if !board.dilate(&region).intersects(&theirs) {
            owned |= region;
        }
    }
    owned
}

/// Whether the empty cell `x` lies in a territory owned by the player whose stones are
/// `theirs` (the opponent of `mine`): a placement there by `mine` is an incursion.
#[inline]
pub fn in_territory_of(board: &Board, x: usize, mine: CellSet, theirs: CellSet) -> bool {
    let empty = *board.on_board() - mine - theirs;
    if !empty.contains(x) {
        return false;
    }
    let region = board.flood(&CellSet::single(x), &empty);
    let border = board.dilate(&region);
    border.intersects(&theirs) && !border.intersects(&mine)
}
