//! Growing the chain: each hook added becomes a node of its current chunk.

use super::chain::{Chain, Lifecycle, Par, ParHook, ParallelGroup, Single};
use super::per_tool::{ErrorOf, OutputOf};
use super::tripwire::Wire;
use crate::on;

/// Appends a node to the chain `(full chunks, current chunk)`; a full chunk of 16 nodes moves
/// into the full chunks.
pub trait Push<Node> {
    /// The grown chain.
    type Output: Chain;
    /// Appends `node`.
    fn push(self, node: Node) -> Self::Output;
}

/// Appends a parallel `pre` hook: it joins the group right before it, or starts one.
pub trait PushParallel<P> {
    /// The grown chain.
    type Output: Chain;
    /// Appends `hook`.
    fn push_parallel(self, hook: P) -> Self::Output;
}

/// Appends a full chunk to the full chunks.
#[diagnostic::on_unimplemented(
    message = "an agent holds at most 256 hooks",
    label = "this hook is one too many",
    note = "combine related hooks into one struct that implements `agentix::Hook`"
)]
pub trait PushChunk<Chunk> {
    /// The grown chunks.
    type Output: Chain;
    /// Appends `chunk`.
    fn push_chunk(self, chunk: Chunk) -> Self::Output;
}

macro_rules! push_chunk {
    ($($chunk:ident $index:tt)*) => {
        impl<$($chunk: Chain,)* New: Chain> PushChunk<New> for ($($chunk,)*) {
            type Output = ($($chunk,)* New,);

            #[allow(non_snake_case)]
            fn push_chunk(self, new: New) -> Self::Output {
                let ($($chunk,)*) = self;
                ($($chunk,)* new,)
            }
        }
    };
}

macro_rules! push_node {
    ($($node:ident $index:tt)*) => {
        impl<Full: Chain, $($node: Chain,)* New: Chain> Push<New> for (Full, ($($node,)*)) {
            type Output = (Full, ($($node,)* New,));

            #[allow(non_snake_case)]
            fn push(self, new: New) -> Self::Output {
                let (full, ($($node,)*)) = self;
                (full, ($($node,)* new,))
            }
        }

        impl<Full: Chain, $($node: Chain,)* G: ParallelGroup, P: on::ParallelPre> PushParallel<P>
            for (Full, ($($node,)* Par<G>,))
        {
            type Output = (Full, ($($node,)* Par<(G, ParHook<P>)>,));

            #[allow(non_snake_case)]
            fn push_parallel(self, hook: P) -> Self::Output {
                let (full, ($($node,)* Par(group),)) = self;
                (full, ($($node,)* Par((group, ParHook::new(hook))),))
            }
        }

        push_parallel_after!([$($node)*] Lifecycle<Last>; Last);
        push_parallel_after!([$($node)*] Single<Last, Kind>; Last, Kind);
        push_parallel_after!([$($node)*] OutputOf<Last>; Last);
        push_parallel_after!([$($node)*] ErrorOf<Last>; Last);
        push_parallel_after!([$($node)*] Wire<Last>; Last);
    };
}

/// A parallel hook after a sequential node starts a new group (in this chunk, or a new one).
macro_rules! push_parallel_after {
    ([$($node:ident)*] $last:ty; $($param:ident),*) => {
        impl<Full: Chain, $($node: Chain,)* $($param,)* P: on::ParallelPre> PushParallel<P>
            for (Full, ($($node,)* $last,))
        where
            $last: Chain,
            (Full, ($($node,)* $last,)): Push<Par<((), ParHook<P>)>>,
        {
            type Output = <(Full, ($($node,)* $last,)) as Push<Par<((), ParHook<P>)>>>::Output;

            fn push_parallel(self, hook: P) -> Self::Output {
                self.push(Par(((), ParHook::new(hook))))
            }
        }
    };
}

prefixes!(push_chunk [] X0 0 X1 1 X2 2 X3 3 X4 4 X5 5 X6 6 X7 7 X8 8 X9 9 X10 10 X11 11 X12 12 X13 13 X14 14);
prefixes!(push_node [] X0 0 X1 1 X2 2 X3 3 X4 4 X5 5 X6 6 X7 7 X8 8 X9 9 X10 10 X11 11 X12 12 X13 13 X14 14);

/// A full current chunk moves into the full chunks, and the new node starts the next chunk.
impl<Full, X0, X1, X2, X3, X4, X5, X6, X7, X8, X9, X10, X11, X12, X13, X14, X15, New> Push<New>
    for (Full, (X0, X1, X2, X3, X4, X5, X6, X7, X8, X9, X10, X11, X12, X13, X14, X15))
where
    Full: PushChunk<(X0, X1, X2, X3, X4, X5, X6, X7, X8, X9, X10, X11, X12, X13, X14, X15)>,
    (X0, X1, X2, X3, X4, X5, X6, X7, X8, X9, X10, X11, X12, X13, X14, X15): Chain,
    New: Chain,
{
    type Output = (Full::Output, (New,));

    fn push(self, new: New) -> Self::Output {
        let (full, chunk) = self;
        (full.push_chunk(chunk), (new,))
    }
}

impl<Full: Chain, P: on::ParallelPre> PushParallel<P> for (Full, ()) {
    type Output = (Full, (Par<((), ParHook<P>)>,));

    fn push_parallel(self, hook: P) -> Self::Output {
        (self.0, (Par(((), ParHook::new(hook))),))
    }
}
