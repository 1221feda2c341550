; (either) needs at least one type.
(define (domain delivery)
  (:requirements :strips :typing)
  (:types truck place)
  (:predicates (at ?x ?p - place))
  (:action park
    :parameters (?x - (either) ?p - place)
    :precondition (at ?x ?p)
    :effect (at ?x ?p)))
