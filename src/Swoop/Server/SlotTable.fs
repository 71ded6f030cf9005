/// Places for items that come and go, each keeping its place (its slot) until it leaves:
/// the heartbeat's members, an event hub's streams. Adding, replacing and removing take a
/// lock; reading takes none: a reader scans Items below Used (a free slot holds null), and
/// the array is replaced when it grows, so a reader's copy stays valid. A freed slot is
/// taken again first.
namespace Swoop

open System.Collections.Generic
open System.Threading

[<Sealed>]
type internal SlotTable<'T when 'T: null>(initialSize: int) =
    let gate = obj ()
    let mutable items: 'T[] = Array.zeroCreate (max 1 initialSize)
    let mutable used = 0
    let free = Stack<int>()
    let mutable count = 0

    /// The slots as of now (read without the lock).
    member _.Items = Volatile.Read(&items)

    /// Slots below this have been used.
    member _.Used = Volatile.Read(&used)

    /// Items held now.
    member _.Count = Volatile.Read(&count)

    /// The item in `slot` now (null: free).
    member _.Get(slot: int) = Volatile.Read(&items[slot])

    /// Takes a slot for `item`; returns it, to give back to Remove.
    member _.Add(item: 'T) : int =
        lock gate (fun () ->
            let slot =
                if free.Count > 0 then
                    free.Pop()
                else
                    if used = items.Length then
                        let bigger = Array.zeroCreate (items.Length * 2)
                        Array.blit items 0 bigger 0 items.Length
                        Volatile.Write(&items, bigger)

                    Volatile.Write(&used, used + 1)
                    used - 1

            Volatile.Write(&items[slot], item)
            count <- count + 1
            slot)

    /// Puts `item` in `slot` in place of the one there.
    member _.Set(slot: int, item: 'T) =
        lock gate (fun () -> Volatile.Write(&items[slot], item))

    /// Frees `slot`.
    member _.Remove(slot: int) =
        lock gate (fun () ->
            Volatile.Write(&items[slot], null)
            free.Push slot
            count <- count - 1)
