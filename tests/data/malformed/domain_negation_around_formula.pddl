; (not (and ...)) is a disjunction in disguise, even with :negative-preconditions declared.
(define (domain bw)
  (:requirements :strips :negative-preconditions)
  (:predicates (clear ?x) (holding ?x))
  (:action pickup
    :parameters (?x)
    :precondition (and (clear ?x)
                       (not (and (holding ?x) (clear ?x))))
    :effect (holding ?x)))
