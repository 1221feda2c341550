; Negative preconditions that the translator's mutexes do not imply: a lock on each door (its own
; binary variable) and "the robot is not in room ?r" (a multi-valued variable: the translator
; splits that action into one variant per other room).
(define (domain doors)
  (:requirements :strips :typing :negative-preconditions :equality)
  (:types room door key)
  (:predicates (at ?r - room) (connects ?d - door ?a ?b - room) (locked ?d - door)
               (fits ?k - key ?d - door) (has ?k - key) (key-at ?k - key ?r - room)
               (alarm ?r - room) (visited ?r - room))
  (:action walk
    :parameters (?d - door ?a ?b - room)
    :precondition (and (at ?a) (connects ?d ?a ?b) (not (locked ?d)) (not (= ?a ?b)))
    :effect (and (at ?b) (not (at ?a)) (visited ?b)))
  (:action unlock
    :parameters (?d - door ?k - key ?a ?b - room)
    :precondition (and (at ?a) (connects ?d ?a ?b) (locked ?d) (has ?k) (fits ?k ?d))
    :effect (not (locked ?d)))
  (:action take
    :parameters (?k - key ?r - room)
    :precondition (and (at ?r) (key-at ?k ?r))
    :effect (and (has ?k) (not (key-at ?k ?r))))
  (:action ring
    :parameters (?r - room)
    :precondition (and (not (at ?r)) (not (alarm ?r)))
    :effect (alarm ?r)))
