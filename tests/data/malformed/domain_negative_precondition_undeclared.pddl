; A negative precondition, although :negative-preconditions is not even declared.
(define (domain bw)
  (:requirements :strips)
  (:predicates (clear ?x) (holding ?x))
  (:action pickup
    :parameters (?x)
    :precondition (and (clear ?x)
                       (not (holding ?x)))
    :effect (holding ?x)))
